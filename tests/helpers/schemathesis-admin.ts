// What schemathesis needs to reach the admin API's operations with valid data: the admin token and
// real names and ids (a served model of its own, a node, a key, an org, a team, a project, a
// catalogued workflow, a training run). Made through ctl; the run may stop and scale that model, revoke that key.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { uniqueModel, type Platform } from "./platform.ts";
import { REPO } from "./settings.ts";
import type { SchemathesisRun } from "./schemathesis.ts";

export interface AdminFixtures {
  model: string;
  node: string;
  keyId: string;
  workflow: string;
  comfyModel: string;
  operation: string;
  /** A training run, and its workflow: an operation that may still be running, to steer. */
  training: string;
  trainingOperation: string;
}

/** comfyModel: a served ComfyUI model, for the catalogued workflow. */
export async function adminFixtures(p: Platform, comfyModel: string): Promise<AdminFixtures> {
  const ctl = async (args: string[]) => {
    const r = await p.ctl(args);
    assert.equal(r.code, 0, `ctl ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  await ctl(["projects", "create", "st-admin"]);
  const keyId = (JSON.parse(await ctl(["keys", "create", "--project", "st-admin", "--json"])) as { id: string }).id;
  const model = uniqueModel("st-admin");
  const served = JSON.parse(await ctl(["model", "serve", model, "--engine", "sim", "--replicas", "1", "--wait", "--json"])) as { id?: string; operationId?: string };
  const node = (await p.admin<{ data: { id: string }[] }>("GET", "/nodes")).data[0]!.id;
  const workflow = uniqueModel("st-admin-wf");
  const wfFile = path.join(p.dataDir, "st-admin-wf.json");
  fs.writeFileSync(wfFile, JSON.stringify({ name: workflow, model: comfyModel, output: "image", inputs: [], graph: { "1": { class_type: "SaveImage", inputs: {} } } }));
  await ctl(["workflow", "add", "-f", wfFile, "--json"]);
  const run = await p.admin<{ id: string; operationId: string }>("POST", "/training", { base: model, data: '{"q": "2+2?", "a": "4"}\n', gpuMemoryMiB: 1 });
  return { model, node, keyId, workflow, comfyModel, operation: served.operationId ?? served.id ?? `model/${model}`, training: run.id, trainingOperation: run.operationId };
}

export function adminRun(p: Platform, f: AdminFixtures): Omit<SchemathesisRun, "maxExamples" | "workers"> {
  const at = (name: string, parameters: Record<string, string>) => ({ name, parameters });
  const model = (name: string) => at(name, { name: f.model });
  return {
    schemaUrl: `${p.adminUrl}/api/v1/openapi.json`,
    baseUrl: p.adminUrl,
    auth: { adminToken: { bearer: p.adminToken } },
    headers: { Authorization: `Bearer ${p.adminToken}` },
    allowNul: false,
    operations: [
      ...["GET /api/v1/models/{name}", "GET /api/v1/models/{name}/placement", "PUT /api/v1/models/{name}/prices", "GET /api/v1/models/{name}/settings", "PATCH /api/v1/models/{name}/settings"].map(model),
      ...["serve", "scale", "stop", "upgrade", "canary"].map((a) => model(`POST /api/v1/models/{name}/${a}`)),
      at("GET /api/v1/comfy-workflows/{name}", { name: f.workflow }),
      at("PATCH /api/v1/projects/{name}/settings", { name: "st-admin" }),
      {
        name: "GET /api/v1/operations/{id}",
        parameters: { id: f.operation },
        skipChecks: { unsupported_method: "an operation id holds slashes, so POST /operations/{id} is POST /operations/{id}/{action}: declared" },
      },
      at("POST /api/v1/operations/{id}/{action}", { id: f.trainingOperation }),
      ...["GET /api/v1/training/{id}", "GET /api/v1/training/{id}/artifact"].map((name) => at(name, { id: f.training })),
      ...["cordon", "uncordon"].map((a) => at(`POST /api/v1/nodes/{id}/${a}`, { id: f.node })),
      ...["revoke", "rotate"].map((a) => at(`POST /api/v1/keys/{id}/${a}`, { id: f.keyId })),
    ],
    hooks: { file: path.join(REPO, "tests/schemathesis/admin_hooks.py"), env: { ST_COMFY_MODEL: f.comfyModel } },
  };
}
