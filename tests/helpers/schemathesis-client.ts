// What schemathesis needs to reach every operation of the client API with valid data: a key, a sim
// model for inference, ComfyUI stand-ins for pictures and meshes, a catalogued workflow, files and
// jobs of the key's project. Made through the platform's own ctl and client API.
import assert from "node:assert/strict";
import path from "node:path";
import { encodeRgb } from "../../common/png.ts";
import { uniqueModel, type Platform } from "./platform.ts";
import { REPO } from "./settings.ts";
import type { SchemathesisRun } from "./schemathesis.ts";
import fs from "node:fs";

export const PICTURE = encodeRgb(8, 8, (x, y) => [x * 32, y * 32, 90]);

export interface ClientFixtures {
  key: string;
  sim: string;
  pictures: string;
  meshes: string;
  workflow: string;
  /** A picture only the 3D hook uses, and a file the file operations may read and delete. */
  pictureFile: string;
  spareFile: string;
  meshJob: string;
  runJob: string;
  /** A stored response of the key's project (/v1/responses/{id}). */
  response: string;
  /** The `model` /v1/moderations is asked with: a judge policy is scoped to it. */
  moderation: string;
}

export async function clientFixtures(p: Platform): Promise<ClientFixtures> {
  const ctl = async (args: string[]) => {
    const r = await p.ctl(args);
    assert.equal(r.code, 0, `ctl ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  await ctl(["projects", "create", "schemathesis"]);
  const key = (JSON.parse(await ctl(["keys", "create", "--project", "schemathesis", "--json"])) as { key: string }).key;
  const sim = uniqueModel("st-sim");
  const pictures = uniqueModel("st-pictures");
  const meshes = uniqueModel("st-meshes");
  await ctl(["model", "serve", sim, "--engine", "sim", "--replicas", "1", "--wait", "--json"]);
  for (const m of [pictures, meshes]) await ctl(["model", "serve", m, "--engine", "comfyui", "--replicas", "1", "--arg=--llmgw-standin", "--arg=--step-ms=1", "--wait", "--json"]);
  // Moderations are answered by a judge policy's model: one scoped to the moderation model's name,
  // so no other request is judged.
  const judge = uniqueModel("st-judge");
  const moderation = "omni-moderation-latest";
  await ctl(["model", "serve", judge, "--engine", "sim", "--replicas", "1", "--arg=--guard-judge", "--arg=true", "--wait", "--json"]);
  const policyFile = path.join(p.dataDir, "st-judge.yaml");
  fs.writeFileSync(policyFile, `name: st-moderation\nscope: model:${moderation}\ninput:\n  - {name: judge, detector: judge, model: ${judge}, timeout: 5, action: flag}`);
  await ctl(["guard", "policy", "add", "-f", policyFile]);
  const workflow = uniqueModel("st-workflow");
  const wfFile = path.join(p.dataDir, "st-workflow.json");
  fs.writeFileSync(wfFile, JSON.stringify(bareWorkflow(workflow, meshes)));
  await ctl(["workflow", "add", "-f", wfFile, "--json"]);

  const api = async (method: string, url: string, body?: unknown) => {
    const r = await fetch(`${p.clientUrl}/v1${url}`, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const out = (await r.json()) as { id: string };
    assert.ok(r.ok, `${method} ${url}: ${r.status} ${JSON.stringify(out)}`);
    return out.id;
  };
  const upload = async (name: string) => {
    const form = new FormData();
    form.append("purpose", "vision");
    form.append("file", new Blob([new Uint8Array(PICTURE)]), name);
    const r = await fetch(`${p.clientUrl}/v1/files`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
    assert.equal(r.status, 200);
    return ((await r.json()) as { id: string }).id;
  };
  const pictureFile = await upload("picture.png");
  const spareFile = await upload("spare.png");
  const meshJob = await api("POST", "/3d/generations", { model: meshes, file_id: pictureFile, resolution: 64, steps: 1 });
  const runJob = await api("POST", "/workflows/runs", { model: workflow });
  const response = await api("POST", "/responses", { model: sim, input: "hi", max_output_tokens: 2 });
  // Gateways load policies over the change feed: wait (bounded) until moderations are answered.
  for (let i = 0; i < 100; i++) {
    const r = await fetch(`${p.clientUrl}/v1/moderations`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ model: moderation, input: "hi" }) });
    if (r.status === 200) break;
    await new Promise((res) => setTimeout(res, 100));
  }
  return { key, sim, pictures, meshes, workflow, pictureFile, spareFile, meshJob, runJob, response, moderation };
}

/** A catalogued workflow without inputs: any body naming it with `inputs: {}` is valid. */
function bareWorkflow(name: string, model: string) {
  return {
    name,
    model,
    output: "image",
    inputs: [],
    graph: {
      "1": { class_type: "EmptyLatentImage", inputs: { width: 32, height: 32, batch_size: 1 } },
      "2": { class_type: "KSampler", inputs: { steps: 1, cfg: 1, sampler_name: "euler", seed: 3 } },
      "3": { class_type: "SaveImage", inputs: { images: ["2", 0], filename_prefix: "st" } },
    },
  };
}

/** The run: each operation with the values that reach it. */
export function clientRun(p: Platform, f: ClientFixtures): Omit<SchemathesisRun, "maxExamples" | "maxTimeS" | "workers"> {
  const model = (name: string, m: string) => ({ name, parameters: { "body.model": m } });
  const id = (name: string, v: string) => ({ name, parameters: { id: v } });
  return {
    schemaUrl: `${p.clientUrl}/v1/openapi.json`,
    baseUrl: p.clientUrl,
    auth: { bearer: { bearer: f.key }, apiKey: { api_key: f.key } },
    operations: [
      id("GET /v1/models/{id}", f.sim),
      model("POST /v1/chat/completions", f.sim),
      model("POST /v1/completions", f.sim),
      model("POST /v1/embeddings", f.sim),
      model("POST /v1/rerank", f.sim),
      model("POST /v1/moderations", f.moderation),
      // An empty or unreadable audio file is refused (by the gateway, or the engine): the document
      // cannot say what a file holds, as for POST /v1/files.
      { ...model("POST /v1/audio/transcriptions", f.sim), skipChecks: { positive_data_acceptance: "an audio file's content is checked, which the document cannot say" } },
      model("POST /v1/messages", f.sim),
      model("POST /v1/messages/count_tokens", f.sim),
      model("POST /v1/responses", f.sim),
      id("GET /v1/responses/{id}", f.response),
      id("DELETE /v1/responses/{id}", f.response),
      id("GET /v1/responses/{id}/input_items", f.response),
      model("POST /v1/images/generations", f.pictures),
      model("POST /v1/3d/generations", f.meshes),
      model("POST /v1/workflows/runs", f.workflow),
      // purpose=batch takes only a JSONL file of requests, checked line by line at upload: the
      // document cannot say what a file holds, so a valid-looking upload of any bytes is refused.
      { name: "POST /v1/files", skipChecks: { positive_data_acceptance: "a batch file's content is checked line by line, which the document cannot say" } },
      id("GET /v1/files/{id}", f.spareFile),
      id("GET /v1/files/{id}/content", f.spareFile),
      id("DELETE /v1/files/{id}", f.spareFile),
      id("GET /v1/3d/generations/{id}", f.meshJob),
      id("POST /v1/3d/generations/{id}/cancel", f.meshJob),
      id("GET /v1/workflows/runs/{id}", f.runJob),
      id("POST /v1/workflows/runs/{id}/cancel", f.runJob),
    ],
    hooks: {
      file: path.join(REPO, "tests/schemathesis/client_hooks.py"),
      env: { ST_PICTURE_B64: PICTURE.toString("base64"), ST_PICTURE_FILE: f.pictureFile, ST_SPARE_FILE: f.spareFile, ST_WORKFLOW: f.workflow, ST_BASE_URL: p.clientUrl, ST_KEY: f.key, ST_SIM: f.sim, ST_RESPONSE: f.response },
    },
  };
}
