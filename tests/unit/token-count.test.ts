// The token counter against small HTTP servers speaking each engine's protocol: vLLM's /tokenize
// with messages ({count}), llama-server's (/tokenize answers {tokens} only, so /apply-template then
// /tokenize with the text), and an engine with neither (404: the estimate, and not asked again).
// Repeated prompts come from the cache; a slow or failing engine gives the estimate.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, describe, it } from "node:test";
import { Breaker } from "../../gateway/router/breaker.ts";
import type { Endpoint } from "../../gateway/router/endpoint.ts";
import { TokenCounter } from "../../gateway/router/token-count.ts";
import { upstreamPool } from "../../gateway/router/upstream-pool.ts";

type Handler = (path: string, body: Record<string, unknown>) => [number, unknown];
const servers: http.Server[] = [];
const seen: string[] = [];

async function engine(handle: Handler): Promise<Endpoint> {
  const s = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString()));
    req.on("end", () => {
      seen.push(`${req.url} ${req.headers.authorization}`);
      const [status, body] = handle(req.url!, JSON.parse(raw) as Record<string, unknown>);
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    });
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  return { id: url, model: "m", version: "v1", url, pool: upstreamPool(url, 4), outside: null, breaker: new Breaker(), engineAuth: "Bearer engine-key" } as unknown as Endpoint;
}

const chat = (text: string) => ({ messages: [{ role: "user", content: text }] });

describe("TokenCounter", () => {
  after(() => servers.forEach((s) => s.close()));

  it("vLLM's form: the count from /tokenize with messages, then from the cache", async () => {
    const e = await engine((path, body) => (path === "/tokenize" && Array.isArray(body.messages) ? [200, { count: 42, max_model_len: 100, tokens: [] }] : [404, {}]));
    const c = new TokenCounter();
    assert.deepEqual(await c.count([e], chat("hello"), 2), { tokens: 42, exact: true });
    assert.deepEqual(await c.count([e], chat("hello"), 2), { tokens: 42, exact: true });
    assert.equal(c.engineCalls, 1);
    assert.ok(seen.includes("/tokenize Bearer engine-key"));
  });

  it("llama-server's form: /apply-template, then /tokenize of the text with add_special", async () => {
    const e = await engine((path, body) => {
      if (path === "/apply-template") return [200, { prompt: `<|user|>${(body.messages as { content: string }[])[0]!.content}` }];
      if (path === "/tokenize" && typeof body.content === "string") return [200, { tokens: Array.from({ length: body.content.length + (body.add_special ? 1 : 0) }, () => 1) }];
      return [200, { tokens: [] }]; // /tokenize without content: llama-server answers an empty list
    });
    const c = new TokenCounter();
    assert.deepEqual(await c.count([e], chat("abc"), 1), { tokens: "<|user|>abc".length + 1, exact: true });
    assert.deepEqual(await c.count([e], { prompt: "abcd" }, 1), { tokens: 5, exact: true });
  });

  it("an engine without a tokenizer, an outside provider, or none ready: the estimate, and a 404 is not asked again", async () => {
    let asked = 0;
    const e = await engine(() => {
      asked++;
      return [404, {}];
    });
    const c = new TokenCounter();
    assert.deepEqual(await c.count([e], chat("x"), 7), { tokens: 7, exact: false });
    assert.deepEqual(await c.count([e], chat("y"), 8), { tokens: 8, exact: false });
    assert.equal(asked, 1);
    assert.deepEqual(await c.count([{ ...e, outside: {} } as Endpoint], chat("z"), 3), { tokens: 3, exact: false });
    assert.deepEqual(await c.count([], chat("z"), 3), { tokens: 3, exact: false });
  });

  it("a refusal (400) or a failure (500) gives the estimate without forgetting the engine's form", async () => {
    let status = 400;
    const e = await engine(() => [status, status === 200 ? { count: 5 } : { error: {} }]);
    const c = new TokenCounter();
    assert.deepEqual(await c.count([e], chat("a"), 1), { tokens: 1, exact: false });
    status = 500;
    assert.deepEqual(await c.count([e], chat("b"), 1), { tokens: 1, exact: false });
    status = 200;
    assert.deepEqual(await c.count([e], chat("c"), 1), { tokens: 5, exact: true });
  });
});
