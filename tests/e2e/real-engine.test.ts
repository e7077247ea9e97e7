// A real inference engine nobody here wrote: llama.cpp (node-llama-cpp's build, on the CPU) serving a
// tiny GGUF written by scripts/make-tiny-gguf.ts, put in the catalog with a local `path:` source and
// served by the serve workflow. At temperature 0 the engine asked directly and the gateway give the
// same text, streamed and not, through the official openai client.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { stringify } from "yaml";
import { parseEngineLoad } from "../../gateway/router/engine-metrics.ts";
import { engineAuth, engineKey } from "../../common/engine-key.ts";
import { writeTinyGguf } from "../../scripts/make-tiny-gguf.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

const PROMPT = [{ role: "user" as const, content: "Say hello to the world" }];
const MAX_TOKENS = 12;

async function chat(client: OpenAI, model: string, stream: boolean): Promise<{ text: string; finish: string | null }> {
  if (!stream) {
    const r = await client.chat.completions.create({ model, messages: PROMPT, max_tokens: MAX_TOKENS, temperature: 0 });
    return { text: r.choices[0]!.message.content ?? "", finish: r.choices[0]!.finish_reason };
  }
  let text = "";
  let finish: string | null = null;
  for await (const c of await client.chat.completions.create({ model, messages: PROMPT, max_tokens: MAX_TOKENS, temperature: 0, stream: true })) {
    text += c.choices[0]?.delta.content ?? "";
    finish = c.choices[0]?.finish_reason ?? finish;
  }
  return { text, finish };
}

async function complete(client: OpenAI, model: string, stream: boolean): Promise<string> {
  const prompt = "hello world, say";
  if (!stream) return (await client.completions.create({ model, prompt, max_tokens: MAX_TOKENS, temperature: 0 })).choices[0]!.text;
  let text = "";
  for await (const c of await client.completions.create({ model, prompt, max_tokens: MAX_TOKENS, temperature: 0, stream: true })) text += c.choices[0]?.text ?? "";
  return text;
}

describe("a GGUF model served on node-llama-cpp (llama.cpp on the CPU)", () => {
  let p: Platform;
  let gateway: OpenAI;
  let direct: OpenAI;
  let engineUrl: string;
  /** The replica's key: llama.cpp, like the gateway, is asked with it (its /metrics too). */
  let engineHeaders: { authorization: string };
  const model = uniqueModel("e2e-gguf");

  before(async () => {
    p = await startPlatform();
    const gguf = writeTinyGguf(path.join(p.dataDir, "tiny.gguf"));
    const file = path.join(p.dataDir, "model.yaml");
    fs.writeFileSync(
      file,
      stringify({
        name: model,
        versions: [{ version: "v1", engine: "node-llama-cpp", source: { path: gguf }, args: ["--threads", "1"], context_length: 256, max_output: 64 }],
      }),
    );
    const added = await p.ctl(["model", "add", "-f", file, "--json"]);
    assert.equal(added.code, 0, added.stderr);
    const { key } = await p.newKey();
    await p.serve(model, { engine: null });
    const shown = await p.admin<{ replicas: { id: string; state: string; url: string }[] }>("GET", `/models/${model}`);
    assert.equal(shown.replicas.length, 1);
    assert.equal(shown.replicas[0]!.state, "ready");
    engineUrl = shown.replicas[0]!.url;
    gateway = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key });
    engineHeaders = engineAuth(p.env.LLMGW_CLUSTER_TOKEN!, shown.replicas[0]!.id);
    direct = new OpenAI({ baseURL: `${engineUrl}/v1`, apiKey: engineKey(p.env.LLMGW_CLUSTER_TOKEN!, shown.replicas[0]!.id) });
  });

  after(async () => {
    await p?.stop();
  });

  it("is llama.cpp answering: llama-server's /health, /v1/models and llamacpp: metrics", async () => {
    assert.deepEqual(await (await fetch(`${engineUrl}/health`)).json(), { status: "ok" });
    const ids: string[] = [];
    for await (const m of direct.models.list()) ids.push(m.id);
    assert.deepEqual(ids, [model]);
    const metrics = await (await fetch(`${engineUrl}/metrics`, { headers: engineHeaders })).text();
    assert.match(metrics, /^llamacpp:requests_processing 0$/m);
    const load = parseEngineLoad(metrics);
    assert.ok(load && load.running === 0 && load.waiting === 0 && load.kvCacheUsage > 0, `the router reads its load: ${JSON.stringify(load)}`);
    // The serve workflow's smoke test was a real generation.
    assert.match(metrics, /^llamacpp:tokens_predicted_total [1-9]/m);
  });

  it("gives the same chat answer at temperature 0 directly and through the gateway, not streamed", async () => {
    const a = await chat(direct, model, false);
    const b = await chat(gateway, model, false);
    assert.ok(a.text.length > 0, "the engine produced text");
    assert.equal(a.finish, "length", "the tiny model runs to max_tokens");
    assert.deepEqual(b, a);
  });

  it("gives the same chat answer streamed, and the same as not streamed", async () => {
    const whole = await chat(direct, model, false);
    const a = await chat(direct, model, true);
    const b = await chat(gateway, model, true);
    assert.deepEqual(a, whole);
    assert.deepEqual(b, a);
  });

  it("gives the same text completion directly and through the gateway, streamed and not", async () => {
    const a = await complete(direct, model, false);
    assert.ok(a.length > 0);
    assert.equal(await complete(gateway, model, false), a);
    assert.equal(await complete(direct, model, true), a);
    assert.equal(await complete(gateway, model, true), a);
  });

  it("counts the gateway's requests in the engine's metrics", async () => {
    const before = Number(/^llamacpp:tokens_predicted_total (\S+)$/m.exec(await (await fetch(`${engineUrl}/metrics`, { headers: engineHeaders })).text())![1]);
    await chat(gateway, model, false);
    const after = Number(/^llamacpp:tokens_predicted_total (\S+)$/m.exec(await (await fetch(`${engineUrl}/metrics`, { headers: engineHeaders })).text())![1]);
    assert.equal(after - before, MAX_TOKENS);
  });
});
