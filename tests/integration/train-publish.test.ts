// Publishing a finished training's LoRA adapter to a served model (`ctl train publish`): the
// stand-in trainer makes a real safetensors adapter, the model's sim replicas load it through
// vLLM's /v1/load_lora_adapter ONE AT A TIME (each sim records when its load began and ended, and
// the intervals must not overlap), every replica lists it in /v1/models with the base as parent, a
// client asks for it by name through the gateway, a replica added later loads it before serving,
// and a publish of an unfinished run, to an unknown model or under a taken name is refused.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { waitFor } from "../../common/children.ts";
import { engineAuth } from "../../common/engine-key.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

interface Adapter {
  id: string;
  name: string;
  model: string;
  state: string;
  loaded: string[];
  error: string | null;
}
interface SimLora {
  loads: { name: string; path: string; startedAtMs: number; endedAtMs: number }[];
  requests: Record<string, number>;
}
interface ModelView {
  replicas: { id: string; url: string; state: string }[];
}

describe("train publish", () => {
  let p: Platform;
  let key: string;
  let trainingId: string;
  const model = uniqueModel("lora");
  const adapter = `${model}-support`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-publish-"));
  const data = path.join(dir, "pairs.ndjson");

  const ctlJson = async <T>(args: string[]): Promise<T> => {
    const r = await p.ctl([...args, "--json"]);
    assert.equal(r.code, 0, `ctl ${args.join(" ")}: ${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  };
  const adapters = async () => (await p.admin<{ data: Adapter[] }>("GET", `/adapters?model=${model}`)).data;
  const simLora = async (url: string) => (await (await fetch(`${url}/debug/lora`)).json()) as SimLora;
  const readyReplicas = async () => (await p.admin<ModelView>("GET", `/models/${model}`)).replicas.filter((r) => r.state === "ready");

  before(async () => {
    const smi = path.join(dir, "nvidia-smi");
    fs.writeFileSync(smi, '#!/bin/sh\necho "0, NVIDIA L4, GPU-00000000-0000-0000-0000-000000000000, 24576, 1, 8.9, 550.54.15, 35, 20.1, 72.00, 0, 4, 4, 16, 16"\n', { mode: 0o755 });
    fs.writeFileSync(data, Array.from({ length: 8 }, (_, i) => JSON.stringify({ q: `ticket ${i}?`, a: `answer ${i}` })).join("\n") + "\n");
    process.env.LLMGW_NVIDIA_SMI = smi;
    process.env.LLMGW_TRAINER = "standin";
    p = await startPlatform();
    await p.ctl(["projects", "create", "lora"]);
    key = (JSON.parse((await p.ctl(["keys", "create", "--project", "lora", "--json"])).stdout) as { key: string }).key;
    // Each load takes 400 ms in the sim, so loads that overlapped would show in their intervals.
    const served = await p.ctl(["model", "serve", model, "--engine", "sim", "--version", "v1", "--replicas", "3", "--arg=--lora-load-ms=400", "--wait"]);
    assert.equal(served.code, 0, served.stderr);
    ({ id: trainingId } = await ctlJson<{ id: string }>(["train", "start", "--base", model, "--data", data, "--gpu-memory", "8000", "--params", '{"rank":4,"epochs":2,"step_ms":10}']));
    const run = await ctlJson<{ state: string; error: string | null }>(["train", "show", trainingId, "--follow"]);
    assert.equal(run.state, "completed", run.error ?? "");
  });
  after(async () => {
    await p?.stop();
  });

  it("loads the adapter on every replica one at a time, then routes its name to them", async () => {
    const r = await ctlJson<{ id: string; name: string; operationId: string }>(["train", "publish", trainingId, "--to", model, "--name", adapter]);
    assert.equal(r.name, adapter);
    assert.match(r.operationId, new RegExp(`^model/${model}/publish/\\d+$`));
    const done = await waitFor("the publish to end", async () => (await adapters()).find((a) => a.name === adapter && a.state !== "loading") ?? null, 120_000);
    assert.equal(done.state, "ready", done.error ?? "");
    const published = (JSON.parse((await p.ctl(["notify", "list", "--json"])).stdout) as { kind: string; details: { adapter?: string; model?: string; replicas?: number } }[]).filter(
      (n) => n.kind === "adapter_published" && n.details.adapter === adapter,
    );
    assert.deepEqual(published.map((n) => [n.details.model, n.details.replicas]), [[model, 3]], "one adapter_published notification");

    const replicas = await readyReplicas();
    assert.equal(replicas.length, 3);
    assert.deepEqual([...done.loaded].sort(), replicas.map((x) => x.id).sort(), "every replica loaded it");
    const intervals = [];
    for (const x of replicas) {
      const lora = await simLora(x.url);
      assert.equal(lora.loads.length, 1, `${x.id} loaded it once`);
      assert.equal(lora.loads[0]!.name, adapter);
      intervals.push(lora.loads[0]!);
      const models = (await (await fetch(`${x.url}/v1/models`, { headers: engineAuth(p.env.LLMGW_CLUSTER_TOKEN!, x.id) })).json()) as { data: { id: string; parent: string | null }[] };
      assert.deepEqual(models.data.find((m) => m.id === adapter)?.parent, model, `${x.id} lists the adapter with its base as parent`);
    }
    intervals.sort((a, b) => a.startedAtMs - b.startedAtMs);
    for (let i = 1; i < intervals.length; i++) {
      assert.ok(intervals[i]!.startedAtMs >= intervals[i - 1]!.endedAtMs, `load ${i + 1} began (${intervals[i]!.startedAtMs}) before load ${i} ended (${intervals[i - 1]!.endedAtMs})`);
    }

    // The gateway reads published adapters with its catalog (every few seconds).
    const client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, maxRetries: 0 });
    await waitFor("the gateway to list the adapter", async () => (await client.models.list()).data.some((m) => m.id === adapter), 30_000);
    const answer = await client.chat.completions.create({ model: adapter, messages: [{ role: "user", content: "ticket 3?" }], max_tokens: 4 });
    assert.equal(answer.model, adapter);
    assert.ok(answer.choices[0]?.message.content);
    let asked = 0;
    for (const x of replicas) asked += (await simLora(x.url)).requests[adapter] ?? 0;
    assert.equal(asked, 1, "a replica's engine was asked for the adapter by its name");
  });

  it("a replica added later loads the adapter before it serves", async () => {
    const before = new Set((await readyReplicas()).map((x) => x.id));
    const scaled = await p.ctl(["model", "scale", model, "--replicas", "4", "--wait"]);
    assert.equal(scaled.code, 0, scaled.stderr);
    const added = (await readyReplicas()).filter((x) => !before.has(x.id));
    assert.equal(added.length, 1);
    const lora = await simLora(added[0]!.url);
    assert.deepEqual(lora.loads.map((l) => l.name), [adapter]);
  });

  it("refuses an unfinished run, an unknown model and a taken name with a clear 4xx", async () => {
    const { id: running } = await ctlJson<{ id: string }>(["train", "start", "--base", model, "--data", data, "--gpu-memory", "8000", "--params", '{"epochs":500,"step_ms":100}']);
    const early = await p.ctl(["train", "publish", running, "--to", model]);
    assert.notEqual(early.code, 0);
    assert.match(early.stderr, /has not finished \((queued|running)\)/);
    await p.ctl(["train", "cancel", running]);

    const unknown = await fetch(`${p.adminUrl}/api/v1/training/${trainingId}/publish`, {
      method: "POST",
      headers: { authorization: `Bearer ${p.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "no-such-model-anywhere" }),
    });
    assert.equal(unknown.status, 404);
    assert.deepEqual(await unknown.json(), { error: { message: "no model 'no-such-model-anywhere' in the catalog", field: "model" } });

    const taken = await p.ctl(["train", "publish", trainingId, "--to", model, "--name", adapter]);
    assert.notEqual(taken.code, 0);
    assert.match(taken.stderr, /the name '.*' is taken/);
    assert.equal((await adapters()).length, 1, "no adapter was recorded for the refused publishes");
  });
});
