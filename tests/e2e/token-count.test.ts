// Exact token counts from the engine's own tokenizer. A tiny GGUF on the node-llama-cpp engine
// (llama.cpp's tokenizer and chat template; tokens are far shorter than 4 characters there) and a
// sim model: /v1/messages/count_tokens says `x-llmgw-token-count: exact` and equals the
// prompt_tokens the engine then reports; a prompt the 4-characters estimate lets through is
// refused on the exact count; a key not allowed the model gets Anthropic's 403.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { writeTinyGguf } from "../../scripts/make-tiny-gguf.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

const CONTEXT = 256;

describe("exact token counts from the engine's tokenizer", () => {
  let p: Platform;
  let key: string;
  let openai: OpenAI;
  const gguf = uniqueModel("e2e-count-gguf");
  const sim = uniqueModel("e2e-count-sim");

  const countTokens = async (body: Record<string, unknown>, apiKey = key) => {
    const r = await fetch(`${p.clientUrl}/v1/messages/count_tokens`, { method: "POST", headers: { "x-api-key": apiKey, "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });
    return { status: r.status, how: r.headers.get("x-llmgw-token-count"), body: (await r.json()) as { input_tokens?: number; type?: string; error?: { type: string } } };
  };
  const messages = async (body: Record<string, unknown>) => {
    const r = await fetch(`${p.clientUrl}/v1/messages`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json", "anthropic-version": "2023-06-01" }, body: JSON.stringify(body) });
    assert.equal(r.status, 200, await r.clone().text());
    return (await r.json()) as { usage: { input_tokens: number } };
  };

  before(async () => {
    p = await startPlatform();
    const file = writeTinyGguf(path.join(p.dataDir, "tiny.gguf"));
    await p.admin("POST", "/models", { name: gguf, versions: [{ version: "v1", engine: "node-llama-cpp", source: { path: file }, args: ["--threads", "1"], context_length: CONTEXT, max_output: 64 }] });
    await p.admin("POST", "/models", { name: sim, versions: [{ version: "v1", engine: "sim", context_length: 2048, max_output: 64 }] });
    await Promise.all([p.serve(gguf, { engine: null }), p.serve(sim, { engine: null })]);
    ({ key } = await p.newKey());
    openai = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, maxRetries: 0 });
    // The gateway reads the catalog every 5 s: wait (bounded) until it holds the context length.
    const described = async () => ((await openai.models.retrieve(gguf).catch(() => null)) as { context_length?: number } | null)?.context_length;
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && (await described()) !== CONTEXT) await new Promise((res) => setTimeout(res, 250));
  });
  after(async () => {
    await p?.stop();
  });

  it("node-llama-cpp: count_tokens is exact and equals the prompt_tokens the engine reports, through its chat template", async () => {
    const prompt = { system: "Be brief.", messages: [{ role: "user", content: "Say hello to the world" }, { role: "assistant", content: "Hello" }, { role: "user", content: "Again, héllo 日本" }] };
    const counted = await countTokens({ model: gguf, ...prompt });
    assert.equal(counted.status, 200, JSON.stringify(counted.body));
    assert.equal(counted.how, "exact");
    const estimate = Math.ceil("Be brief.Say hello to the worldHelloAgain, héllo 日本".length / 4);
    assert.ok(counted.body.input_tokens! > estimate, `the template and this tokenizer make more than the estimate: ${counted.body.input_tokens} vs ${estimate}`);
    const m = await messages({ model: gguf, max_tokens: 4, temperature: 0, ...prompt });
    assert.equal(m.usage.input_tokens, counted.body.input_tokens);
    const chat = await openai.chat.completions.create({ model: gguf, max_tokens: 4, temperature: 0, messages: [{ role: "system", content: "Be brief." }, ...(prompt.messages as OpenAI.ChatCompletionMessageParam[])] });
    assert.equal(chat.usage!.prompt_tokens, counted.body.input_tokens);
    // Asked again: from the cache, the same.
    assert.deepEqual(await countTokens({ model: gguf, ...prompt }), counted);
  });

  it("node-llama-cpp: a prompt the estimate lets through is refused on the exact count", async () => {
    const text = "hello world ".repeat(30); // 360 characters: about 90 tokens by the estimate, far more here
    const r = await fetch(`${p.clientUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: gguf, max_tokens: 16, messages: [{ role: "user", content: text }] }),
    });
    const body = (await r.json()) as { error: { code: string; param: string; message: string } };
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.headers.get("x-llmgw-token-count"), "exact");
    assert.equal(body.error.code, "context_length_exceeded");
    assert.equal(body.error.param, "messages");
    assert.match(body.error.message, /maximum context length is 256 tokens\. However, you requested \d+ tokens/);
    const counted = await countTokens({ model: gguf, messages: [{ role: "user", content: text }] });
    assert.ok(counted.body.input_tokens! + 16 > CONTEXT);
    // A short one is served and not counted by the engine (no header).
    const ok = await fetch(`${p.clientUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: gguf, max_tokens: 2, messages: [{ role: "user", content: "hi" }] }),
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get("x-llmgw-token-count"), null);
  });

  it("the engine speaks llama-server's /tokenize and /apply-template", async () => {
    const shown = await p.admin<{ replicas: { id: string; url: string }[] }>("GET", `/models/${gguf}`);
    const { engineAuth } = await import("../../common/engine-key.ts");
    const headers = { ...engineAuth(p.env.LLMGW_CLUSTER_TOKEN!, shown.replicas[0]!.id), "content-type": "application/json" };
    const url = shown.replicas[0]!.url;
    const t = (await (await fetch(`${url}/tokenize`, { method: "POST", headers, body: JSON.stringify({ content: "hello", with_pieces: true }) })).json()) as { tokens: { id: number; piece: string }[] };
    assert.ok(t.tokens.length > 0 && typeof t.tokens[0]!.id === "number" && typeof t.tokens[0]!.piece === "string");
    const a = (await (await fetch(`${url}/apply-template`, { method: "POST", headers, body: JSON.stringify({ messages: [{ role: "user", content: "hello" }] }) })).json()) as { prompt: string };
    assert.match(a.prompt, /hello/);
  });

  it("sim: count_tokens is exact, equals input_tokens, and a key not allowed the model is Anthropic's 403", async () => {
    const prompt = { system: "Be brief.", messages: [{ role: "user", content: "Say hello" }] };
    const counted = await countTokens({ model: sim, ...prompt });
    assert.equal(counted.how, "exact");
    assert.equal(counted.body.input_tokens, (await messages({ model: sim, max_tokens: 4, ...prompt })).usage.input_tokens);
    const other = await p.newKey({ args: ["--model", "nothing-*"] });
    const refused = await countTokens({ model: sim, ...prompt }, other.key);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.type, "error");
    assert.equal(refused.body.error!.type, "permission_error");
    const bad = await countTokens({ model: sim, messages: "nope" });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error!.type, "invalid_request_error");
  });
});
