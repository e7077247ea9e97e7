// llmgw's own making tools on /mcp against a cold model, with the SDK's own client on a real platform
// (gateway, worker, agent, the ComfyUI stand-in engine): llmgw.images.generate on an on-demand
// picture model that sleeps wakes it, telling the caller so in progress notifications before the
// picture comes, and leaves it served; llmgw.workflows.run then runs a catalog workflow on it, its
// inputs put into the graph, and llmgw.jobs.status reads the run back as done. A model added a
// moment ago (the gateway's catalog not yet re-read) is woken all the same. /v1's own jobs wake a
// sleeping model too (the job activity asks, activities/job-wake.ts): a picture through the official
// openai client on another sleeping model comes back, and the model is left served.
import assert from "node:assert/strict";
import fs from "node:fs";
import nodePath from "node:path";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import OpenAI from "openai";
import { CallToolResultSchema, type CallToolResult, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { waitFor } from "../../common/children.ts";
import { prisma, type PrismaClient } from "../../common/db.ts";
import { engineAuth } from "../../common/engine-key.ts";
import { pngSize } from "../../common/png.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

const text = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;
const json = <T,>(r: unknown) => JSON.parse(text(r)) as T;
type Shown = { replicas: { state: string }[]; state: { onDemand?: { phase: string; wakes: number } } | null };

describe("llmgw's own making tools on /mcp wake a cold on-demand model", () => {
  let p: Platform;
  let db: PrismaClient;
  let key: string;
  let c: Client;
  const model = uniqueModel("mcp-cold");
  const workflow = uniqueModel("mcp-wf");

  const ctl = async (args: string[]) => {
    const r = await p.ctl(args);
    assert.equal(r.code, 0, `ctl ${args.join(" ")}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  };
  const show = async (name = model) => JSON.parse(await ctl(["model", "show", name, "--json"])) as Shown;
  const addOnDemand = async (name: string) => {
    const f = nodePath.join(p.dataDir, `${name}.yaml`);
    fs.writeFileSync(f, `name: ${name}\nmin_replicas: 0\nidle_after: 1h\nversions:\n  - version: v1\n    engine: comfyui\n    args: ["--llmgw-standin", "--step-ms=20"]\n`);
    await ctl(["model", "add", "-f", f, "--json"]);
  };

  before(async () => {
    p = await startPlatform();
    db = prisma(p.env.DATABASE_URL);
    await addOnDemand(model);
    const wf = nodePath.join(p.dataDir, `${workflow}.json`);
    fs.writeFileSync(
      wf,
      JSON.stringify({
        name: workflow,
        model,
        output: "image",
        inputs: [
          { name: "prompt", kind: "text", max_length: 200 },
          { name: "steps", kind: "int", min: 1, max: 50, default: 3 },
        ],
        graph: {
          "1": { class_type: "CLIPTextEncode", inputs: { text: "a photo of {{prompt}}" } },
          "2": { class_type: "EmptyLatentImage", inputs: { width: 32, height: 32, batch_size: 1 } },
          "3": { class_type: "KSampler", inputs: { steps: "{{steps}}", seed: 5 } },
          "4": { class_type: "SaveImage", inputs: { images: ["3", 0], filename_prefix: "mcp" } },
        },
      }),
    );
    await ctl(["workflow", "add", "-f", wf, "--json"]);
    const k = await p.newKey({ project: "cold" });
    key = k.key;
    await ctl(["keys", "limits", k.id, "--tools", "llmgw.*"]);
    // The gateway re-reads the catalog every few seconds; it wakes only models it knows are on demand.
    await waitFor(`the gateway to know ${model}`, async () => (await fetch(`${p.clientUrl}/v1/models/${model}`, { headers: { authorization: `Bearer ${key}` } })).ok, 30_000);
    c = new Client({ name: "mcp-cold-test", version: "1" });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${p.clientUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  });

  after(async () => {
    await c?.close().catch(() => undefined);
    await db?.$disconnect();
    await p?.stop();
  });

  it("wakes the sleeping picture model for llmgw.images.generate, reporting progress before the picture", async () => {
    // Asleep: no replica (p.enginePids knows only the sim engine's processes).
    assert.equal((await show()).replicas.length, 0);
    assert.equal(await db.replica.count({ where: { modelName: model } }), 0);
    const progress: Progress[] = [];
    const r = (await c.callTool({ name: "llmgw.images.generate", arguments: { model, prompt: "a lighthouse at dusk", size: "64x64", steps: 4 } }, CallToolResultSchema, {
      onprogress: (x) => void progress.push(x),
      timeout: 300_000,
      resetTimeoutOnProgress: true,
    })) as CallToolResult;
    assert.ok(!r.isError, text(r));
    const image = r.content.find((x) => x.type === "image") as { data: string; mimeType: string } | undefined;
    assert.equal(image?.mimeType, "image/png");
    assert.deepEqual(pngSize(Buffer.from(image!.data, "base64")), { width: 64, height: 64 });
    const said = progress.map((x) => x.message ?? "");
    assert.ok(progress.length >= 1, "progress came before the picture (notifications precede the result)");
    assert.ok(said.some((m) => /waiting for a GPU \(no ready replica of /.test(m)), `the wait for the model was told: ${said.join(" | ")}`);
    // The model is now served: a ready replica, shown as woken once.
    const shown = await show();
    assert.deepEqual(shown.replicas.map((x) => x.state), ["ready"]);
    assert.equal(shown.state?.onDemand?.phase, "serving");
    assert.equal(shown.state?.onDemand?.wakes, 1);
    const made = json<{ job: string }>(r);
    const job = json<{ status: string; model: string }>(await c.callTool({ name: "llmgw.jobs.status", arguments: { id: made.job } }));
    assert.deepEqual([job.status, job.model], ["completed", model]);
  });

  it("runs a catalog workflow through llmgw.workflows.run, its inputs in the graph, and jobs.status says done", async () => {
    const progress: Progress[] = [];
    const r = (await c.callTool({ name: "llmgw.workflows.run", arguments: { workflow, inputs: { prompt: "a cat", steps: 6 } } }, CallToolResultSchema, {
      onprogress: (x) => void progress.push(x),
      timeout: 300_000,
      resetTimeoutOnProgress: true,
    })) as CallToolResult;
    assert.ok(!r.isError, text(r));
    const made = json<{ job: string; files: { id: string; content_type: string; url: string }[] }>(r);
    assert.equal(made.files.length, 1, text(r));
    assert.equal(made.files[0]!.content_type, "image/png");
    const image = r.content.find((x) => x.type === "image") as { data: string } | undefined;
    assert.deepEqual(pngSize(Buffer.from(image!.data, "base64")), { width: 32, height: 32 });
    assert.ok(progress.length >= 1, "progress was reported");
    const job = json<{ status: string; model: string; result: { files: { id: string }[] } | null }>(await c.callTool({ name: "llmgw.jobs.status", arguments: { id: made.job } }));
    assert.deepEqual([job.status, job.model], ["completed", model]);
    assert.deepEqual(job.result?.files.map((f) => f.id), [made.files[0]!.id]);
    const file = (await c.callTool({ name: "llmgw.files.get", arguments: { id: made.files[0]!.id } })) as CallToolResult;
    assert.equal((file.content[0] as { data: string }).data, image!.data);
    // The engine was given the graph with the run's inputs in their places.
    const replica = await db.replica.findFirstOrThrow({ where: { modelName: model, state: "ready" } });
    const history = (await (await fetch(`${replica.url}/history/${made.job}`, { headers: engineAuth(p.env.LLMGW_CLUSTER_TOKEN!, replica.id) })).json()) as Record<string, { prompt: [number, string, Record<string, { inputs: Record<string, unknown> }>] }>;
    const graph = history[made.job]!.prompt[2];
    assert.deepEqual([graph["1"]!.inputs.text, graph["3"]!.inputs.steps], ["a photo of a cat", 6]);
    // A run asked with an input it does not declare is refused, and makes no job.
    const before = await db.job.count({ where: { model } });
    const bad = await c.callTool({ name: "llmgw.workflows.run", arguments: { workflow, inputs: { prompt: "x", colour: "red" } } });
    assert.ok(bad.isError && /colour/.test(text(bad)), text(bad));
    assert.equal(await db.job.count({ where: { model } }), before);
  });

  it("wakes a model added a moment ago, before the gateway's catalog has heard it is on demand", async () => {
    const fresh = uniqueModel("mcp-fresh");
    await addOnDemand(fresh);
    // No wait for the gateway's catalog (re-read every few seconds): the tool's first ask to wake may
    // find the model unknown, and the job must still get its model.
    const r = (await c.callTool({ name: "llmgw.images.generate", arguments: { model: fresh, prompt: "a harbour", size: "64x64", steps: 2 } }, CallToolResultSchema, { timeout: 180_000 })) as CallToolResult;
    assert.ok(!r.isError, text(r));
    assert.deepEqual((await show(fresh)).replicas.map((x) => x.state), ["ready"]);
  });

  it("wakes a sleeping model for a /v1/images/generations job too, not only for the tools", async () => {
    const cold = uniqueModel("v1-cold");
    await addOnDemand(cold);
    assert.equal((await show(cold)).replicas.length, 0);
    const client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, timeout: 300_000 });
    const r = await client.images.generate({ model: cold, prompt: "a lighthouse in fog", size: "64x64", response_format: "b64_json" });
    assert.deepEqual(pngSize(Buffer.from(r.data![0]!.b64_json!, "base64")), { width: 64, height: 64 });
    const shown = await show(cold);
    assert.deepEqual(shown.replicas.map((x) => x.state), ["ready"]);
    assert.equal(shown.state?.onDemand?.phase, "serving");
    assert.equal(shown.state?.onDemand?.wakes, 1);
  });
});
