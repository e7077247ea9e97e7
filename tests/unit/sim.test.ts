// The sim engine speaks the OpenAI API as vLLM does: deterministic chat and completions, streamed
// and not, stop strings, n, embeddings, the errors, the key, the metrics, and the official client.
// Timing: sim-scheduling.test.ts; tools and structured output: sim-structured.test.ts; the process
// the agent starts: sim-process.test.ts.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { closeSims, sim, post, sse, metric, hello, type ChatChunk } from "../helpers/sim.ts";

after(closeSims);

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
