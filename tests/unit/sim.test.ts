import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";
import { startSim } from "../../agent/engines/sim/server.ts";
import type { SimSettingsInput } from "../../agent/engines/sim/settings.ts";
import { simCommand, validateSimArgs, SIM_HEALTH_PATH } from "../../agent/engines/sim.ts";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

type Handle = Awaited<ReturnType<typeof startSim>>;
const open: Handle[] = [];
after(async () => {
  await Promise.all(open.map((h) => h.close()));
});

async function sim(extra: Partial<SimSettingsInput> = {}): Promise<{ base: string; h: Handle }> {
  const h = await startSim({ port: 0, host: "127.0.0.1", model: "sim-chat", ...extra });
  open.push(h);
  return { base: `http://127.0.0.1:${h.port}`, h };
}

function post(base: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(base + path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

interface ChatChunk {
  id: string;
  object: string;
  choices: { index: number; delta: { role?: string; content?: string }; finish_reason: string | null }[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
}

/** The `data:` payloads of an SSE body; the last must be [DONE]. */
function sse(text: string): string[] {
  assert.ok(text.endsWith("\n\n"), "events end with a blank line");
  const events = text.slice(0, -2).split("\n\n");
  for (const e of events) assert.ok(e.startsWith("data: "), `event ${JSON.stringify(e)} is a data line`);
  return events.map((e) => e.slice(6));
}

async function metric(base: string, name: string, labels = ""): Promise<number> {
  const text = await (await fetch(base + "/metrics")).text();
  for (const line of text.split("\n")) {
    if (line.startsWith(name + "{") && line.includes(labels)) return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  throw new Error(`no ${name} in metrics`);
}

/** Polls `f` until it returns true, or fails after `ms`. */
async function waitFor(f: () => Promise<boolean>, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

const hello = [{ role: "user", content: "Tell me something about the sea." }];

test("non-streamed chat is deterministic for a seed and differs across seeds", async () => {
  const { base } = await sim();
  const ask = async (seed: number) => {
    const r = await post(base, "/v1/chat/completions", { model: "my-model", messages: hello, seed, max_tokens: 20 });
    assert.equal(r.status, 200);
    return (await r.json()) as {
      id: string;
      object: string;
      model: string;
      created: number;
      choices: { message: { role: string; content: string }; finish_reason: string }[];
      usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
    };
  };
  const a = await ask(1);
  const b = await ask(1);
  const c = await ask(2);
  assert.match(a.id, /^chatcmpl-\d+$/);
  assert.notEqual(a.id, b.id);
  assert.equal(a.object, "chat.completion");
  assert.equal(a.model, "my-model");
  assert.equal(typeof a.created, "number");
  assert.equal(a.choices[0]!.message.role, "assistant");
  assert.equal(a.choices[0]!.message.content, b.choices[0]!.message.content);
  assert.notEqual(a.choices[0]!.message.content, c.choices[0]!.message.content);
  assert.ok(a.choices[0]!.message.content.length > 0);
  // ceil(chars/4) over the messages
  assert.equal(a.usage.prompt_tokens, Math.ceil(hello[0]!.content.length / 4));
  assert.ok(a.usage.completion_tokens >= 1 && a.usage.completion_tokens <= 20);
  assert.equal(a.usage.total_tokens, a.usage.prompt_tokens + a.usage.completion_tokens);
  assert.ok(["stop", "length"].includes(a.choices[0]!.finish_reason));
  const short = await post(base, "/v1/chat/completions", { messages: hello, seed: 1, max_tokens: 3 });
  const s = (await short.json()) as { model: string; choices: { finish_reason: string }[]; usage: { completion_tokens: number } };
  assert.equal(s.usage.completion_tokens, 3);
  assert.equal(s.choices[0]!.finish_reason, "length");
  assert.equal(s.model, "sim-chat", "the served name when the request names none");
});

test("streamed chat is well formed, ends with [DONE], and matches the non-streamed answer", async () => {
  const { base } = await sim();
  const body = { model: "m", messages: hello, seed: 7, max_tokens: 12 };
  const whole = (await (await post(base, "/v1/chat/completions", body)).json()) as {
    choices: { message: { content: string }; finish_reason: string }[];
  };
  const r = await post(base, "/v1/chat/completions", { ...body, stream: true }, { "x-request-id": "req-42" });
  assert.equal(r.status, 200);
  assert.match(r.headers.get("content-type") ?? "", /^text\/event-stream/);
  assert.equal(r.headers.get("x-request-id"), "req-42");
  const events = sse(await r.text());
  assert.equal(events.at(-1), "[DONE]");
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as ChatChunk);
  assert.ok(chunks.length >= 2);
  const id = chunks[0]!.id;
  for (const c of chunks) {
    assert.equal(c.object, "chat.completion.chunk");
    assert.equal(c.id, id);
    assert.equal(c.usage, undefined, "no usage field without include_usage");
  }
  assert.equal(chunks[0]!.choices[0]!.delta.role, "assistant");
  const finishes = chunks.map((c) => c.choices[0]!.finish_reason);
  assert.deepEqual(
    finishes.slice(0, -1).filter((f) => f !== null),
    [],
    "only the last content chunk carries a finish_reason",
  );
  assert.equal(finishes.at(-1), whole.choices[0]!.finish_reason);
  const text = chunks.map((c) => c.choices[0]!.delta.content ?? "").join("");
  assert.equal(text, whole.choices[0]!.message.content);

  const other = await post(base, "/v1/chat/completions", { ...body, seed: 8, stream: true });
  const otherText = sse(await other.text())
    .slice(0, -1)
    .map((e) => (JSON.parse(e) as ChatChunk).choices[0]!.delta.content ?? "")
    .join("");
  assert.notEqual(otherText, text);
});

test("include_usage adds a final chunk with no choices and the usage", async () => {
  const { base } = await sim();
  const r = await post(base, "/v1/chat/completions", {
    messages: hello,
    max_tokens: 5,
    stream: true,
    stream_options: { include_usage: true },
  });
  const events = sse(await r.text());
  assert.equal(events.at(-1), "[DONE]");
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as ChatChunk);
  const last = chunks.at(-1)!;
  assert.deepEqual(last.choices, []);
  assert.ok(last.usage);
  assert.equal(last.usage.completion_tokens, 5);
  assert.equal(last.usage.total_tokens, last.usage.prompt_tokens + 5);
  for (const c of chunks.slice(0, -1)) assert.equal(c.usage, null);
  assert.equal(chunks.at(-2)!.choices[0]!.finish_reason, "length");
});

test("stop strings cut the answer before the first match", async () => {
  const { base } = await sim();
  const body = { messages: hello, seed: 3, max_tokens: 40 };
  const full = ((await (await post(base, "/v1/chat/completions", body)).json()) as {
    choices: { message: { content: string } }[];
  }).choices[0]!.message.content;
  const words = full.split(" ").filter((w) => w.length > 1 && !w.includes("."));
  const word = words[Math.floor(words.length / 2)]!;
  const stop = " " + word;
  const cut = full.slice(0, full.indexOf(stop));
  const r = (await (await post(base, "/v1/chat/completions", { ...body, stop: [stop, "zzz-never"] })).json()) as {
    choices: { message: { content: string }; finish_reason: string; stop_reason: string }[];
    usage: { completion_tokens: number };
  };
  assert.equal(r.choices[0]!.message.content, cut);
  assert.equal(r.choices[0]!.finish_reason, "stop");
  assert.equal(r.choices[0]!.stop_reason, stop);
  assert.ok(r.usage.completion_tokens < 40);
  // The same through a stream, and as a plain string.
  const s = await post(base, "/v1/chat/completions", { ...body, stop, stream: true });
  const chunks = sse(await s.text())
    .slice(0, -1)
    .map((e) => JSON.parse(e) as ChatChunk);
  assert.equal(chunks.map((c) => c.choices[0]!.delta.content ?? "").join(""), cut);
  assert.equal(chunks.at(-1)!.choices[0]!.finish_reason, "stop");
});

test("n choices and the completions endpoint", async () => {
  const { base } = await sim();
  const r = (await (await post(base, "/v1/chat/completions", { messages: hello, n: 3, max_tokens: 6, seed: 1 })).json()) as {
    choices: { index: number; message: { content: string } }[];
    usage: { completion_tokens: number };
  };
  assert.deepEqual(
    r.choices.map((c) => c.index),
    [0, 1, 2],
  );
  assert.equal(new Set(r.choices.map((c) => c.message.content)).size, 3);
  assert.equal(r.usage.completion_tokens, 18);

  const c = (await (await post(base, "/v1/completions", { model: "m", prompt: "Once upon a time", max_tokens: 4 })).json()) as {
    id: string;
    object: string;
    choices: { text: string; finish_reason: string }[];
    usage: { prompt_tokens: number; completion_tokens: number };
  };
  assert.match(c.id, /^cmpl-\d+$/);
  assert.equal(c.object, "text_completion");
  assert.equal(c.usage.prompt_tokens, 4);
  assert.equal(c.usage.completion_tokens, 4);
  assert.equal(c.choices[0]!.finish_reason, "length");
  const s = await post(base, "/v1/completions", {
    prompt: "Once upon a time",
    max_tokens: 4,
    stream: true,
    stream_options: { include_usage: true },
  });
  const events = sse(await s.text());
  assert.equal(events.at(-1), "[DONE]");
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as { object: string; choices: { text: string }[] });
  for (const ch of chunks) assert.equal(ch.object, "text_completion");
  assert.equal(
    chunks
      .slice(0, -1)
      .map((ch) => ch.choices[0]!.text)
      .join(""),
    c.choices[0]!.text,
  );
  assert.deepEqual(chunks.at(-1)!.choices, []);
});

test("embeddings: float and base64 agree, unit norm, deterministic", async () => {
  const { base } = await sim();
  const input = ["hello world", "something else", [1, 2, 3]];
  type Emb = { object: string; data: { index: number; embedding: number[] | string }[]; usage: { prompt_tokens: number } };
  const f = (await (await post(base, "/v1/embeddings", { model: "e", input })).json()) as Emb;
  const b = (await (await post(base, "/v1/embeddings", { model: "e", input, encoding_format: "base64" })).json()) as Emb;
  const again = (await (await post(base, "/v1/embeddings", { input: "hello world" })).json()) as Emb;
  assert.equal(f.object, "list");
  assert.equal(f.data.length, 3);
  for (let i = 0; i < 3; i++) {
    const v = f.data[i]!.embedding as number[];
    assert.equal(f.data[i]!.index, i);
    assert.equal(v.length, 64);
    const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    assert.ok(Math.abs(norm - 1) < 1e-5, `norm ${norm}`);
    const buf = Buffer.from(b.data[i]!.embedding as string, "base64");
    assert.equal(buf.length, 64 * 4);
    const decoded = Array.from({ length: 64 }, (_, k) => buf.readFloatLE(k * 4));
    assert.deepEqual(decoded, v);
  }
  assert.notDeepEqual(f.data[0]!.embedding, f.data[1]!.embedding);
  assert.deepEqual(again.data[0]!.embedding, f.data[0]!.embedding);
  assert.ok(f.usage.prompt_tokens > 0);
});

test("a load delay answers 503 until it passes, then /health is 200", async () => {
  const { base } = await sim({ loadDelayMs: 800 });
  const h1 = await fetch(base + SIM_HEALTH_PATH);
  assert.equal(h1.status, 503);
  const r1 = await post(base, "/v1/chat/completions", { messages: hello });
  assert.equal(r1.status, 503);
  const e = (await r1.json()) as { error: { message: string; type: string } };
  assert.equal(typeof e.error.message, "string");
  await waitFor(async () => (await fetch(base + "/health")).status === 200);
  assert.equal((await post(base, "/v1/chat/completions", { messages: hello })).status, 200);
  const models = (await (await fetch(base + "/v1/models")).json()) as {
    object: string;
    data: { id: string; object: string; max_model_len: number }[];
  };
  assert.equal(models.object, "list");
  assert.deepEqual(
    models.data.map((m) => [m.id, m.object, m.max_model_len]),
    [["sim-chat", "model", 4096]],
  );
});

test("with one slot, a second request waits while a slow stream runs", async () => {
  const { base } = await sim({ slots: 1, tokensPerSecond: 50, ttftMs: 10 });
  const first = post(base, "/v1/chat/completions", { messages: hello, max_tokens: 20, stream: true });
  const firstRes = await first; // headers come at once
  await new Promise((r) => setTimeout(r, 50));
  const second = post(base, "/v1/chat/completions", { messages: hello, max_tokens: 2 });
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(await metric(base, "vllm:num_requests_running"), 1);
  assert.equal(await metric(base, "vllm:num_requests_waiting"), 1);
  assert.equal(await metric(base, "vllm:kv_cache_usage_perc"), 1);
  assert.equal(await metric(base, "vllm:gpu_cache_usage_perc"), 1);
  const events = sse(await firstRes.text());
  assert.equal(events.at(-1), "[DONE]");
  assert.equal((await second).status, 200);
  assert.equal(await metric(base, "vllm:num_requests_running"), 0);
  assert.equal(await metric(base, "vllm:num_requests_waiting"), 0);
  // Timed: the first token came after the ttft, and tokens at about 50/s.
  assert.ok((await metric(base, "vllm:time_per_output_token_seconds_sum")) > 0);
  // One inter-token interval per generated token after each request's first.
  assert.equal(
    await metric(base, "vllm:time_per_output_token_seconds_count"),
    (await metric(base, "vllm:generation_tokens_total")) - 2,
  );
});

test("a client that goes away mid-stream stops the generation and counts as aborted", async () => {
  const { base } = await sim({ tokensPerSecond: 20 });
  const ac = new AbortController();
  const r = await post(base, "/v1/chat/completions", { messages: hello, max_tokens: 100, stream: true });
  const r2 = await fetch(base + "/v1/chat/completions", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ messages: hello, max_tokens: 100, stream: true }),
    signal: ac.signal,
  });
  const reader = r2.body!.getReader();
  await reader.read();
  ac.abort();
  await r.body?.cancel();
  await waitFor(async () => (await metric(base, "vllm:request_success_total", 'finished_reason="abort"')) === 2);
  assert.equal(await metric(base, "vllm:num_requests_running"), 0);
  assert.ok((await metric(base, "vllm:generation_tokens_total")) < 20);
});

test("bad requests get 400 and unknown routes 404, in OpenAI's error shape", async () => {
  const { base } = await sim();
  const shape = (j: unknown) => {
    const e = (j as { error: Record<string, unknown> }).error;
    assert.equal(typeof e.message, "string");
    assert.equal(e.type, "invalid_request_error");
    assert.ok("param" in e && "code" in e);
    return e;
  };
  const bad = await post(base, "/v1/chat/completions", "{not json", { "x-request-id": "r1" });
  assert.equal(bad.status, 400);
  assert.equal(bad.headers.get("x-request-id"), "r1");
  shape(await bad.json());
  const noMessages = await post(base, "/v1/chat/completions", { model: "m" });
  assert.equal(noMessages.status, 400);
  assert.equal(shape(await noMessages.json()).param, "messages");
  const badMax = await post(base, "/v1/chat/completions", { messages: hello, max_tokens: "x" });
  assert.equal(badMax.status, 400);
  shape(await badMax.json());
  const tooLong = await post(base, "/v1/chat/completions", { messages: hello, max_tokens: 5000 });
  assert.equal(tooLong.status, 400);
  assert.match(String(shape(await tooLong.json()).message), /maximum context length is 4096/);
  const nf = await fetch(base + "/v1/nope");
  assert.equal(nf.status, 404);
  shape(await nf.json());
  assert.equal((await fetch(base + "/elsewhere")).status, 404);
});

test("an API key is enforced on /v1/* when set", async () => {
  process.env.SIM_TEST_KEY = "sk-sim-secret";
  const { base } = await sim({ apiKeyEnv: "SIM_TEST_KEY" });
  const none = await post(base, "/v1/chat/completions", { messages: hello });
  assert.equal(none.status, 401);
  const e = (await none.json()) as { error: { type: string; code: string; message: string } };
  assert.equal(e.error.code, "invalid_api_key");
  assert.ok(!e.error.message.includes("sk-sim-secret"));
  assert.equal((await post(base, "/v1/chat/completions", { messages: hello }, { authorization: "Bearer nope" })).status, 401);
  assert.equal((await fetch(base + "/v1/models")).status, 401);
  const ok = await post(base, "/v1/chat/completions", { messages: hello }, { authorization: "Bearer sk-sim-secret" });
  assert.equal(ok.status, 200);
  assert.equal((await fetch(base + "/health")).status, 200, "health needs no key");
  assert.equal((await fetch(base + "/metrics")).status, 200, "metrics need no key");
});

test("a key variable named but not set refuses to start rather than serve open", async () => {
  delete process.env.SIM_UNSET_KEY;
  await assert.rejects(sim({ apiKeyEnv: "SIM_UNSET_KEY" }), /SIM_UNSET_KEY, which is not set/);
});

test("metrics counters increase after requests", async () => {
  const { base } = await sim();
  const text = await (await fetch(base + "/metrics")).text();
  for (const name of [
    "vllm:num_requests_running",
    "vllm:num_requests_waiting",
    "vllm:kv_cache_usage_perc",
    "vllm:gpu_cache_usage_perc",
    "vllm:time_to_first_token_seconds",
    "vllm:time_per_output_token_seconds",
    "vllm:e2e_request_latency_seconds",
    "vllm:prompt_tokens_total",
    "vllm:generation_tokens_total",
    "vllm:request_success_total",
  ])
    assert.match(text, new RegExp(`^# TYPE ${name} (gauge|counter|histogram)$`, "m"));
  assert.match(text, /^vllm:time_to_first_token_seconds_bucket\{model_name="sim-chat",le="\+Inf"\} 0\.0$/m);
  const p0 = await metric(base, "vllm:prompt_tokens_total");
  const g0 = await metric(base, "vllm:generation_tokens_total");
  const s0 = await metric(base, "vllm:request_success_total", 'finished_reason="length"');
  const e0 = await metric(base, "vllm:e2e_request_latency_seconds_count");
  for (let i = 0; i < 3; i++) await post(base, "/v1/chat/completions", { messages: hello, max_tokens: 4 });
  assert.equal(await metric(base, "vllm:prompt_tokens_total"), p0 + 3 * Math.ceil(hello[0]!.content.length / 4));
  assert.equal(await metric(base, "vllm:generation_tokens_total"), g0 + 12);
  assert.equal(await metric(base, "vllm:request_success_total", 'finished_reason="length"'), s0 + 3);
  assert.equal(await metric(base, "vllm:e2e_request_latency_seconds_count"), e0 + 3);
  assert.equal(await metric(base, "vllm:time_to_first_token_seconds_count"), 3);
});

test("close lets an in-flight stream finish", async () => {
  const h = await startSim({ port: 0, host: "127.0.0.1", model: "sim-chat", tokensPerSecond: 40 });
  const base = `http://127.0.0.1:${h.port}`;
  const r = await post(base, "/v1/chat/completions", { messages: hello, max_tokens: 8, stream: true });
  const closed = h.close();
  const events = sse(await r.text());
  assert.equal(events.at(-1), "[DONE]");
  await closed;
});

test("the adapter builds the command and refuses unknown flags", () => {
  const c = simCommand({ host: "10.1.2.3", port: 18001, model: "sim-chat", args: ["--ttft-ms", "5"], repoRoot: "/repo" });
  assert.equal(c.command, process.execPath);
  assert.deepEqual(c.args, [
    "--import",
    "tsx",
    "/repo/agent/engines/sim/main.ts",
    "--host",
    "10.1.2.3",
    "--port",
    "18001",
    "--model",
    "sim-chat",
    "--ttft-ms",
    "5",
    "--api-key-env",
    "LLMGW_ENGINE_API_KEY",
  ]);
  assert.equal(validateSimArgs([]), null);
  assert.equal(
    validateSimArgs([
      "--ttft-ms",
      "20",
      "--tokens-per-second=50",
      "--slots",
      "4",
      "--load-delay-ms",
      "0",
      "--max-tokens-default",
      "32",
      "--context-length",
      "8192",
    ]),
    null,
  );
  // The key's variable is the agent's to name: a catalog could otherwise point it at an empty one.
  assert.match(validateSimArgs(["--api-key-env", "SIM_KEY"]) ?? "", /set by the agent/);
  assert.match(validateSimArgs(["--trust-remote-code"]) ?? "", /unknown flag --trust-remote-code/);
  assert.match(validateSimArgs(["--port", "1"]) ?? "", /set by the agent/);
  assert.match(validateSimArgs(["--model", "x"]) ?? "", /set by the agent/);
  assert.notEqual(validateSimArgs(["--slots", "zero"]), null);
  assert.notEqual(validateSimArgs(["--slots"]), null);
});

test("run as a script, a bad flag exits 2 with a message", () => {
  const r = spawnSync(
    process.execPath,
    ["--import", "tsx", join(repoRoot, "agent/engines/sim/main.ts"), "--port", "0", "--model", "m", "--bogus", "1"],
    { cwd: repoRoot, encoding: "utf8", timeout: 20_000 },
  );
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown flag --bogus/);
});

test("run as a script, it logs one JSON line without the key and exits 0 on SIGTERM", async () => {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(repoRoot, "agent/engines/sim/main.ts"), "--port", "0", "--host", "127.0.0.1", "--model", "m", "--api-key-env", "SIM_SCRIPT_KEY"],
    { cwd: repoRoot, env: { ...process.env, SIM_SCRIPT_KEY: "sk-very-secret", SIM_SLOTS: "3" }, stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const line = await new Promise<string>((resolveLine, reject) => {
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (d: string) => {
      stderr += d;
      const nl = stderr.indexOf("\n");
      if (nl >= 0) resolveLine(stderr.slice(0, nl));
    });
    child.once("exit", () => reject(new Error("exited early: " + stderr)));
  });
  const j = JSON.parse(line) as { msg: string; port: number; slots: number };
  assert.equal(j.msg, "sim engine listening");
  assert.equal(j.slots, 3, "SIM_* env vars are read when a flag is absent");
  const base = `http://127.0.0.1:${j.port}`;
  assert.equal((await post(base, "/v1/chat/completions", { messages: hello })).status, 401);
  const ok = await post(base, "/v1/chat/completions", { messages: hello }, { authorization: "Bearer sk-very-secret" });
  assert.equal(ok.status, 200);
  child.kill("SIGTERM");
  assert.equal(await exited, 0);
  assert.ok(!stderr.includes("sk-very-secret"));
});

test("the official openai client talks to the sim (create and stream)", async () => {
  const { base } = await sim();
  const client = new OpenAI({ baseURL: base + "/v1", apiKey: "unused", maxRetries: 0 });
  const done = await client.chat.completions.create({ model: "sim-chat", messages: [{ role: "user", content: "hi" }], seed: 5 });
  assert.equal(done.object, "chat.completion");
  assert.ok((done.choices[0]?.message.content ?? "").length > 0);
  assert.ok(done.usage && done.usage.total_tokens > 0);
  const stream = await client.chat.completions.create({
    model: "sim-chat",
    messages: [{ role: "user", content: "hi" }],
    seed: 5,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "";
  let usage: OpenAI.CompletionUsage | null | undefined;
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? "";
    if (chunk.usage) usage = chunk.usage;
  }
  assert.equal(text, done.choices[0]!.message.content);
  assert.equal(usage?.completion_tokens, done.usage.completion_tokens);
  const models = await client.models.list();
  assert.equal(models.data[0]?.id, "sim-chat");
  const emb = await client.embeddings.create({ model: "sim-chat", input: "hello" });
  assert.equal(emb.data[0]?.embedding.length, 64);
});

const WEATHER_TOOL = {
  type: "function" as const,
  function: {
    name: "get_weather",
    parameters: { type: "object", properties: { city: { type: "string" }, days: { type: "integer" }, unit: { enum: ["c", "f"] } }, required: ["city", "days", "unit"] },
  },
};

test("a request with tools is answered with a deterministic tool call, streamed in several argument pieces", async () => {
  const { base } = await sim();
  const client = new OpenAI({ baseURL: base + "/v1", apiKey: "unused", maxRetries: 0 });
  const other = { type: "function" as const, function: { name: "other", parameters: { type: "object", properties: {} } } };
  const params = { model: "sim-chat", messages: [{ role: "user" as const, content: "weather?" }], tools: [WEATHER_TOOL, other] };
  const done = await client.chat.completions.create(params);
  const call = done.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
  assert.equal(done.choices[0]!.finish_reason, "tool_calls");
  assert.equal(done.choices[0]!.message.content, null);
  assert.equal(call.function.name, "get_weather");
  assert.deepEqual(JSON.parse(call.function.arguments), { city: "sim-city", days: 42, unit: "c" });

  let args = "";
  let pieces = 0;
  let finish: string | null = null;
  for await (const chunk of await client.chat.completions.create({ ...params, stream: true })) {
    const tc = chunk.choices[0]?.delta.tool_calls?.[0];
    if (tc?.function?.arguments) {
      pieces++;
      args += tc.function.arguments;
      if (pieces === 1) assert.deepEqual([tc.id, tc.function.name], [call.id, "get_weather"]);
    }
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  assert.equal(args, call.function.arguments);
  assert.ok(pieces > 2, `arguments in several pieces (${pieces})`);
  assert.equal(finish, "tool_calls");

  const named = await client.chat.completions.create({ ...params, tool_choice: { type: "function", function: { name: "other" } } });
  assert.equal((named.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall).function.name, "other");
  const none = await client.chat.completions.create({ ...params, tool_choice: "none" });
  assert.equal(none.choices[0]!.finish_reason, "length");
  assert.ok(none.choices[0]!.message.content!.length > 0);
  const afterResult = await client.chat.completions.create({
    ...params,
    max_tokens: 300,
    messages: [...params.messages, { role: "assistant", content: null, tool_calls: [call] }, { role: "tool", tool_call_id: call.id, content: "sunny" }],
  });
  assert.equal(afterResult.choices[0]!.finish_reason, "stop", "a tool result is answered with text");
});

test("reasoning (--reasoning, or chat_template_kwargs.enable_thinking) comes before the content, streamed as reasoning_content", async () => {
  const { base } = await sim({ reasoning: true });
  const post1 = async (body: object) => (await (await post(base, "/v1/chat/completions", { messages: [{ role: "user", content: "think" }], max_tokens: 5, ...body })).json()) as {
    choices: { message: { content: string; reasoning_content: string | null } }[];
    usage: { completion_tokens: number };
  };
  const done = await post1({});
  const reasoning = done.choices[0]!.message.reasoning_content!;
  assert.ok(reasoning.length > 0);
  assert.equal(done.usage.completion_tokens, 5 + reasoning.trim().split(" ").length, "reasoning tokens are counted");
  assert.equal((await post1({ chat_template_kwargs: { enable_thinking: false } })).choices[0]!.message.reasoning_content, null);

  const res = await post(base, "/v1/chat/completions", { messages: [{ role: "user", content: "think" }], max_tokens: 5, stream: true });
  const deltas = sse(await res.text()).slice(0, -1).map((d) => (JSON.parse(d) as { choices: { delta: { reasoning_content?: string; content?: string } }[] }).choices[0]!.delta);
  const kinds = deltas.map((d) => (d.reasoning_content !== undefined ? "r" : d.content ? "c" : "-")).join("");
  assert.match(kinds, /^-r+c{5}$/);
  assert.equal(deltas.map((d) => d.reasoning_content ?? "").join(""), reasoning);

  const { base: plain } = await sim();
  const off = (await (await post(plain, "/v1/chat/completions", { messages: [{ role: "user", content: "think" }], max_tokens: 5 })).json()) as typeof done;
  assert.equal(off.choices[0]!.message.reasoning_content, null, "no reasoning unless switched on");
  const on = (await (await post(plain, "/v1/chat/completions", { messages: [{ role: "user", content: "think" }], max_tokens: 5, chat_template_kwargs: { enable_thinking: true } })).json()) as typeof done;
  assert.equal(on.choices[0]!.message.reasoning_content, reasoning);
});

test("response_format json_schema: the answer parses and is valid against the schema (required keys, types, enums, minItems, $ref)", async () => {
  const { base } = await sim();
  const schema = {
    type: "object",
    properties: {
      city: { type: "string", minLength: 12 },
      population: { type: "integer", minimum: 1000 },
      ratio: { type: "number", maximum: 1 },
      capital: { type: "boolean" },
      kind: { type: "string", enum: ["town", "metropolis"] },
      tags: { type: "array", items: { type: "string" }, minItems: 3 },
      mayor: { $ref: "#/$defs/person" },
      nickname: { type: ["string", "null"] },
      optional: { type: "string" },
    },
    required: ["city", "population", "ratio", "capital", "kind", "tags", "mayor", "nickname"],
    additionalProperties: false,
    $defs: { person: { type: "object", properties: { name: { type: "string" }, age: { type: "integer" } }, required: ["name", "age"] } },
  };
  const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "x" });
  const ask = () =>
    client.chat.completions.create({
      model: "sim-chat",
      messages: [{ role: "user", content: "Describe a city" }],
      max_tokens: 500,
      response_format: { type: "json_schema", json_schema: { name: "city", schema, strict: true } },
    });
  const r = await ask();
  assert.equal(r.choices[0]!.finish_reason, "stop");
  const v = JSON.parse(r.choices[0]!.message.content!) as Record<string, unknown>;
  assert.deepEqual(Object.keys(v).sort(), [...schema.required].sort());
  assert.ok(typeof v.city === "string" && v.city.length >= 12);
  assert.ok(Number.isInteger(v.population) && (v.population as number) >= 1000);
  assert.ok(typeof v.ratio === "number" && v.ratio <= 1);
  assert.equal(v.capital, true);
  assert.equal(v.kind, "town");
  assert.ok(Array.isArray(v.tags) && v.tags.length === 3 && v.tags.every((t) => typeof t === "string"));
  const mayor = v.mayor as Record<string, unknown>;
  assert.equal(typeof mayor.name, "string");
  assert.ok(Number.isInteger(mayor.age));
  assert.equal(typeof v.nickname, "string");
  assert.equal((await ask()).choices[0]!.message.content, r.choices[0]!.message.content, "deterministic");
  assert.equal(r.usage!.completion_tokens, Math.ceil(r.choices[0]!.message.content!.length / 8), "a token per 8 characters of JSON");

  // Streamed, the pieces join to the same JSON; cut by max_tokens it ends with "length".
  let streamed = "";
  for await (const c of await client.chat.completions.create({
    model: "sim-chat",
    messages: [{ role: "user", content: "Describe a city" }],
    max_tokens: 500,
    stream: true,
    response_format: { type: "json_schema", json_schema: { name: "city", schema } },
  }))
    streamed += c.choices[0]?.delta.content ?? "";
  assert.equal(streamed, r.choices[0]!.message.content);
  const cut = await client.chat.completions.create({
    model: "sim-chat",
    messages: [{ role: "user", content: "Describe a city" }],
    max_tokens: 2,
    response_format: { type: "json_schema", json_schema: { name: "city", schema } },
  });
  assert.equal(cut.choices[0]!.finish_reason, "length");
  assert.equal(cut.choices[0]!.message.content!.length, 16);
  const unbounded = await client.chat.completions.create({
    model: "sim-chat",
    messages: [{ role: "user", content: "Describe a city" }],
    response_format: { type: "json_schema", json_schema: { name: "city", schema } },
  });
  assert.ok(r.choices[0]!.message.content!.length > 16 * 8);
  assert.equal(unbounded.choices[0]!.message.content, r.choices[0]!.message.content, "without max_tokens the whole JSON, past the 16-token default");
});

test("response_format json_object gives a small JSON object; a bad response_format is a 400 naming it", async () => {
  const { base } = await sim();
  const ask = (response_format: unknown) => post(base, "/v1/chat/completions", { messages: [{ role: "user", content: "json please" }], response_format });
  const r = (await (await ask({ type: "json_object" })).json()) as { choices: { message: { content: string } }[] };
  const v = JSON.parse(r.choices[0]!.message.content) as unknown;
  assert.ok(v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length > 0);
  const any = (await (await ask({ type: "json_schema", json_schema: { name: "any" } })).json()) as { choices: { message: { content: string } }[] };
  assert.deepEqual(JSON.parse(any.choices[0]!.message.content), v, "json_schema without a schema: any JSON object");
  const text = (await (await ask({ type: "text" })).json()) as { choices: { message: { content: string } }[] };
  assert.throws(() => JSON.parse(text.choices[0]!.message.content), "text format: ordinary text");
  for (const [bad, param] of [
    [{ type: "yaml" }, "response_format.type"],
    [{ type: "json_schema", json_schema: { name: "x", schema: "object" } }, "response_format.json_schema.schema"],
  ] as const) {
    const res = await ask(bad);
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { param: string } }).error.param, param);
  }
});

test("logprobs: OpenAI-shaped, deterministic, the sampled token likeliest; streamed and not, chat and completions", async () => {
  const { base } = await sim();
  const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "x" });
  const req = { model: "sim-chat", messages: [{ role: "user" as const, content: "probabilities" }], max_tokens: 6, logprobs: true, top_logprobs: 3 };
  const r = await client.chat.completions.create(req);
  const content = r.choices[0]!.logprobs!.content!;
  assert.equal(content.length, 6);
  assert.equal(content.map((t) => t.token).join(""), r.choices[0]!.message.content);
  for (const t of content) {
    assert.ok(t.logprob < 0 && t.logprob >= -1);
    assert.deepEqual(t.bytes, [...Buffer.from(t.token, "utf8")]);
    assert.equal(t.top_logprobs.length, 3);
    assert.equal(t.top_logprobs[0]!.token, t.token);
    assert.equal(t.top_logprobs[0]!.logprob, t.logprob);
    assert.equal(new Set(t.top_logprobs.map((x) => x.token)).size, 3, "distinct alternatives");
    for (let i = 1; i < 3; i++) assert.ok(t.top_logprobs[i]!.logprob < t.top_logprobs[i - 1]!.logprob);
  }
  assert.deepEqual((await client.chat.completions.create(req)).choices[0]!.logprobs, r.choices[0]!.logprobs, "deterministic");
  const streamed: OpenAI.ChatCompletionTokenLogprob[] = [];
  for await (const c of await client.chat.completions.create({ ...req, stream: true })) streamed.push(...(c.choices[0]?.logprobs?.content ?? []));
  assert.deepEqual(streamed, content);
  const none = await client.chat.completions.create({ ...req, logprobs: false, top_logprobs: undefined });
  assert.equal(none.choices[0]!.logprobs, null);
  const bad = await post(base, "/v1/chat/completions", { messages: req.messages, top_logprobs: 2 });
  assert.equal(bad.status, 400);

  const c = await client.completions.create({ model: "sim-chat", prompt: "Once", max_tokens: 5, logprobs: 2 });
  const lp = c.choices[0]!.logprobs!;
  assert.equal(lp.tokens!.join(""), c.choices[0]!.text);
  assert.equal(lp.token_logprobs!.length, 5);
  assert.equal(Object.keys(lp.top_logprobs![0]!).length, 2);
  assert.equal(lp.text_offset![1], lp.tokens![0]!.length);
  const cs: OpenAI.Completions.Completion["choices"][number]["logprobs"][] = [];
  for await (const ch of await client.completions.create({ model: "sim-chat", prompt: "Once", max_tokens: 5, logprobs: 2, stream: true })) cs.push(ch.choices[0]!.logprobs);
  assert.deepEqual(cs.flatMap((x) => x!.text_offset!), lp.text_offset);
  assert.deepEqual(cs.flatMap((x) => x!.token_logprobs!), lp.token_logprobs);
});
