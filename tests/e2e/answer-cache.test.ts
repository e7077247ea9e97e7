// The answer cache end to end (docs/cache.md), on the real platform with sim engines: engine calls
// are counted at the engine (vllm:request_success_total), not by the gateway under test. A repeated
// question is one engine call, whole or streamed (the stream replayed byte for byte); forty rewordings
// are one engine call through the similar cache (an embedding sim in its bag-of-words mode);
// another project never gets the answer; answers expire; the guard judges before a hit is served;
// the similar cache is off, once logged, while its embedding model is down, and requests are answered.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import pg from "pg";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

const FORTY = [
  ...["What is the capital of France?", "what's the capital of france", "Capital of France?", "Tell me the capital of France.", "France: what is its capital?"],
  ...["Which is the capital of France", "capital of France please", "Could you tell me the capital of France?", "I wonder, what is the capital of France?", "Quick question: the capital of France?"],
].flatMap((q) => [q, `Hello, ${q}`, `${q} Thank you!`, `Please, ${q.toLowerCase()}`]);

describe("answer cache", () => {
  let p: Platform;
  const model = uniqueModel("cached");
  const embedder = uniqueModel("embed");
  let engineUrl: string;
  const keys: Record<"a" | "b" | "c" | "d" | "none", string> = {} as never;
  let keyIdA: string;
  let db: pg.Client;

  const url = () => `${p.clientUrl}/v1/chat/completions`;
  const post = (key: string, body: Record<string, unknown>) =>
    fetch(url(), { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ model, temperature: 0, max_tokens: 8, ...body }) });
  const ask = (key: string, content: string, extra: Record<string, unknown> = {}) => post(key, { messages: [{ role: "user", content }], ...extra });
  /** Chat answers the engine has given (embeddings are not counted there). */
  const engineCalls = async (): Promise<number> => {
    const text = await (await fetch(`${engineUrl}/metrics`)).text();
    return text
      .split("\n")
      .filter((l) => l.startsWith("vllm:request_success_total{"))
      .reduce((n, l) => n + Number(l.split(" ").pop()), 0);
  };
  const cacheSet = async (project: string, args: string[]) => {
    const r = await p.ctl(["cache", "set", project, ...args, "--json"]);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as { cache: { similar: number | null } | null; pgvector: boolean };
  };
  /** Until the gateway has the project's cache (it reloads from the change feed): a throwaway question shows the header. */
  const untilCached = async (key: string) => {
    for (let i = 0; i < 100; i++) {
      const r = await ask(key, `warm-up ${i} ${Math.random()}`);
      await r.text();
      if (r.headers.get("x-llmgw-cache")) return;
      await new Promise((res) => setTimeout(res, 100));
    }
    assert.fail("the gateway never took the cache settings");
  };

  before(async () => {
    p = await startPlatform();
    for (const name of ["a", "b", "c", "d", "none"] as const) {
      const k = await p.newKey({ project: `cache-${name}` });
      keys[name] = k.key;
      if (name === "a") keyIdA = k.id;
    }
    await p.serve(model);
    await p.serve(embedder, { args: ["--embeddings", "words"] });
    const m = await p.admin<{ replicas: { url: string; state: string }[] }>("GET", `/models/${model}`);
    engineUrl = m.replicas.find((r) => r.state === "ready")!.url.replace(/\/+$/, "");
    db = new pg.Client({ connectionString: p.env.DATABASE_URL });
    await db.connect();
    await cacheSet("cache-a", ["--exact", "10m"]);
    await cacheSet("cache-c", ["--exact", "10m"]);
    await cacheSet("cache-d", ["--exact", "2s"]);
    const b = await cacheSet("cache-b", ["--similar", "0.9", "--embedding-model", embedder, "--ttl", "10m"]);
    assert.equal(b.cache?.similar, 0.9);
    assert.equal(b.pgvector, true, "this PostgreSQL has pgvector (scripts/pgvector.sh install)");
    for (const k of [keys.a, keys.b, keys.c, keys.d]) await untilCached(k);
  });

  after(async () => {
    await db?.end();
    await p?.stop();
  });

  it("ctl cache show, bad settings refused, and a project without a cache untouched", async () => {
    const shown = await p.ctl(["cache", "show", "cache-b"]);
    assert.match(shown.stdout, /similar ≥ 0\.9 by embed-/);
    const bad = await p.ctl(["cache", "set", "cache-a", "--similar", "0.9"]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /embedding model/);
    const missing = await p.ctl(["cache", "set", "cache-a", "--similar", "0.9", "--embedding-model", "no-such-model"]);
    assert.match(missing.stderr, /no model 'no-such-model'/);
    const r = await ask(keys.none, "What is the capital of France?");
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("x-llmgw-cache"), null);
  });

  it("a repeated question is one engine call, with a zero-cost usage row per hit", async () => {
    const before = await engineCalls();
    const answers: string[] = [];
    const outcomes: (string | null)[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await ask(keys.a, "How tall is the Eiffel tower?");
      assert.equal(r.status, 200);
      outcomes.push(r.headers.get("x-llmgw-cache"));
      answers.push(await r.text());
    }
    assert.deepEqual(outcomes, ["miss", "hit", "hit", "hit", "hit"]);
    assert.equal(new Set(answers).size, 1, "every hit is the first answer");
    assert.equal((await engineCalls()) - before, 1);
    // The same question sampled (no temperature: the model's default) is not cached.
    const sampled = await post(keys.a, { messages: [{ role: "user", content: "How tall is the Eiffel tower?" }], temperature: 0.7 });
    assert.equal(sampled.headers.get("x-llmgw-cache"), null);
    await sampled.text();
    assert.equal((await engineCalls()) - before, 2);
  });

  it("usage rows record the outcome, hits at zero cost", async () => {
    const k = JSON.parse((await p.ctl(["keys", "create", "--project", "cache-a", "--json"])).stdout) as { key: string; id: string };
    for (let i = 0; i < 3; i++) await (await ask(k.key, "How deep is the Mariana trench?")).text();
    let rows: { cache: string; n: number; cost: number; tokens: number }[] = [];
    for (let i = 0; i < 100 && rows.reduce((s, r) => s + r.n, 0) < 3; i++) {
      await new Promise((res) => setTimeout(res, 200));
      rows = (await db.query("SELECT cache, count(*)::int AS n, sum(cost_micros)::float8 AS cost, sum(prompt_tokens + completion_tokens)::int AS tokens FROM usage_events WHERE key_id = $1 GROUP BY cache ORDER BY cache", [k.id])).rows;
    }
    const hit = rows.find((r) => r.cache === "hit");
    assert.equal(hit?.n, 2, JSON.stringify(rows));
    assert.equal(hit?.cost, 0);
    assert.equal(hit?.tokens, 0);
    assert.equal(rows.find((r) => r.cache === "miss")?.n, 1, JSON.stringify(rows));
  });

  it("embeddings are cached too (nothing in them is sampled): a repeat is no engine call", async () => {
    const m = await p.admin<{ replicas: { url: string; state: string }[] }>("GET", `/models/${embedder}`);
    const embedderUrl = m.replicas.find((r) => r.state === "ready")!.url.replace(/\/+$/, "");
    const embedCalls = async () =>
      (await (await fetch(`${embedderUrl}/metrics`)).text())
        .split("\n")
        .filter((l) => l.startsWith("vllm:request_success_total{"))
        .reduce((n, l) => n + Number(l.split(" ").pop()), 0);
    const before = await embedCalls();
    const embed = (input: string[]) => fetch(`${p.clientUrl}/v1/embeddings`, { method: "POST", headers: { authorization: `Bearer ${keys.a}`, "content-type": "application/json" }, body: JSON.stringify({ model: embedder, input }) });
    const outcomes: (string | null)[] = [];
    const bodies: string[] = [];
    for (const input of [["a lighthouse", "a harbour"], ["a lighthouse", "a harbour"], ["a harbour", "a lighthouse"]]) {
      const r = await embed(input);
      assert.equal(r.status, 200);
      outcomes.push(r.headers.get("x-llmgw-cache"));
      bodies.push(await r.text());
    }
    assert.deepEqual(outcomes, ["miss", "hit", "miss"], "another order of inputs is another question");
    assert.equal(bodies[1], bodies[0]);
    assert.equal((await embedCalls()) - before, 2);
  });

  it("a streamed answer is replayed as the same stream", async () => {
    const before = await engineCalls();
    const first = await ask(keys.a, "Name a primary colour.", { stream: true });
    assert.equal(first.headers.get("x-llmgw-cache"), "miss");
    const firstText = await first.text();
    const second = await ask(keys.a, "Name a primary colour.", { stream: true });
    assert.equal(second.headers.get("x-llmgw-cache"), "hit");
    assert.match(String(second.headers.get("content-type")), /^text\/event-stream/);
    assert.equal(await second.text(), firstText);
    assert.match(firstText, /data: \[DONE\]/);
    // The official SDK reads the replayed stream.
    const sdk = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: keys.a, maxRetries: 0 });
    const stream = await sdk.chat.completions.create({ model, temperature: 0, max_tokens: 8, stream: true, messages: [{ role: "user", content: "Name a primary colour." }] });
    let text = "";
    for await (const c of stream) text += c.choices[0]?.delta.content ?? "";
    assert.ok(text.length > 0);
    // A whole answer to the same question is kept apart from the stream.
    const whole = await ask(keys.a, "Name a primary colour.");
    assert.equal(whole.headers.get("x-llmgw-cache"), "miss");
    await whole.text();
    assert.equal((await engineCalls()) - before, 2);
  });

  it("/v1/messages answers are cached in Anthropic's shape, streamed or not", async () => {
    const before = await engineCalls();
    const messages = (stream: boolean) =>
      fetch(`${p.clientUrl}/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": keys.a, "anthropic-version": "2023-06-01", "content-type": "application/json" },
        body: JSON.stringify({ model, max_tokens: 8, temperature: 0, stream, messages: [{ role: "user", content: "Which planet is red?" }] }),
      });
    for (const stream of [false, true]) {
      const first = await messages(stream);
      assert.equal(first.headers.get("x-llmgw-cache"), "miss");
      const text = await first.text();
      const again = await messages(stream);
      assert.equal(again.headers.get("x-llmgw-cache"), "hit");
      assert.equal(await again.text(), text);
      assert.match(text, stream ? /event: message_stop/ : /"type":"message"/);
    }
    assert.equal((await engineCalls()) - before, 2);
  });

  it("another project never gets the answer", async () => {
    const before = await engineCalls();
    await (await ask(keys.a, "Who wrote Hamlet?")).text();
    const other = await ask(keys.c, "Who wrote Hamlet?");
    assert.equal(other.headers.get("x-llmgw-cache"), "miss");
    await other.text();
    const none = await ask(keys.none, "Who wrote Hamlet?");
    assert.equal(none.headers.get("x-llmgw-cache"), null);
    await none.text();
    assert.equal((await engineCalls()) - before, 3);
  });

  it("a key's own cache: that key is cached, the project's other keys are not", async () => {
    const [own, plain] = [await p.newKey({ project: "cache-e" }), await p.newKey({ project: "cache-e" })];
    const r = await p.ctl(["cache", "set", "--key", own.id, "--exact", "10m", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { key: string }).key, own.id);
    await untilCached(own.key);
    const before = await engineCalls();
    const outcome = async (key: string) => {
      const res = await ask(key, "What colour is the sky?");
      await res.text();
      return res.headers.get("x-llmgw-cache");
    };
    assert.deepEqual([await outcome(own.key), await outcome(own.key), await outcome(plain.key)], ["miss", "hit", null]);
    assert.equal((await engineCalls()) - before, 2);
    assert.match((await p.ctl(["cache", "show", "--key", plain.id])).stdout, /no answer cache of its own/);
    assert.equal((await p.ctl(["cache", "off", "--key", own.id])).code, 0);
  });

  it("answers expire after the TTL", async () => {
    const before = await engineCalls();
    const outcome = async () => {
      const r = await ask(keys.d, "How many legs has a spider?");
      await r.text();
      return r.headers.get("x-llmgw-cache");
    };
    assert.equal(await outcome(), "miss");
    assert.equal(await outcome(), "hit");
    await new Promise((res) => setTimeout(res, 3_000));
    assert.equal(await outcome(), "miss");
    assert.equal((await engineCalls()) - before, 2);
  });

  it("the guard judges a request before a cached answer is served", async () => {
    await (await ask(keys.a, "Tell me about project-zephyr")).text();
    const hit = await ask(keys.a, "Tell me about project-zephyr");
    assert.equal(hit.headers.get("x-llmgw-cache"), "hit");
    await hit.text();
    const file = path.join(fs.mkdtempSync(path.join(p.dataDir, "policies-")), "codenames.yaml");
    fs.writeFileSync(file, `name: codenames\nscope: key:${keyIdA}\ninput:\n  - {name: codenames, detector: deny, patterns: ['project-[a-z]+'], action: block}\n`);
    assert.equal((await p.ctl(["guard", "policy", "add", "-f", file])).code, 0);
    let status = 200;
    for (let i = 0; i < 50 && status === 200; i++) {
      const r = await ask(keys.a, "Tell me about project-zephyr");
      await r.text();
      status = r.status;
      if (status === 200) await new Promise((res) => setTimeout(res, 100));
    }
    assert.equal(status, 400, "the blocked request is refused though its answer is cached");
    assert.equal((await p.ctl(["guard", "policy", "remove", "codenames"])).code, 0);
  });

  it("forty rewordings of one question are one engine call", async () => {
    assert.equal(FORTY.length, 40);
    assert.equal(new Set(FORTY).size, 40);
    const before = await engineCalls();
    const outcomes: Record<string, number> = {};
    const answers = new Set<string>();
    for (const q of FORTY) {
      const r = await ask(keys.b, q);
      assert.equal(r.status, 200);
      const o = String(r.headers.get("x-llmgw-cache"));
      outcomes[o] = (outcomes[o] ?? 0) + 1;
      answers.add(((await r.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content);
    }
    assert.deepEqual(outcomes, { miss: 1, similar: 39 });
    assert.equal(answers.size, 1);
    assert.equal((await engineCalls()) - before, 1);
    // Another question, or the same one after another system prompt, is not similar.
    const other = await ask(keys.b, "What is the capital of Germany?");
    assert.equal(other.headers.get("x-llmgw-cache"), "miss");
    await other.text();
    const system = await post(keys.b, { messages: [{ role: "system", content: "Answer in French." }, { role: "user", content: "What is the capital of France?" }] });
    assert.equal(system.headers.get("x-llmgw-cache"), "miss");
    await system.text();
    assert.equal((await engineCalls()) - before, 3);
  });

  it("the similar cache is off while its embedding model is down; requests are still answered and it is logged once", async () => {
    const r = await p.ctl(["model", "stop", embedder, "--wait"]);
    assert.equal(r.code, 0, r.stderr);
    const before = await engineCalls();
    for (let i = 0; i < 5; i++) {
      const res = await ask(keys.b, `What is the capital of Spain? (${i})`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("x-llmgw-cache"), "miss");
      await res.text();
    }
    assert.equal((await engineCalls()) - before, 5);
    const log = fs.readFileSync(p.children.get("gateway")!.logFile, "utf8");
    const lines = log.split("\n").filter((l) => l.includes("its embedding model does not answer"));
    assert.equal(lines.length, 1, lines.join("\n"));
  });
});
