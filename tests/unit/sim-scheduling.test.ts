// The sim's simulated timing: a loading delay, slots and a FIFO queue, a client that leaves
// mid-stream, and a close that lets a stream in flight finish.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { startSim } from "../../agent/engines/sim/server.ts";
import { SIM_HEALTH_PATH } from "../../agent/engines/sim.ts";
import { closeSims, sim, post, sse, metric, waitFor, hello } from "../helpers/sim.ts";

after(closeSims);

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

test("close lets an in-flight stream finish", async () => {
  const h = await startSim({ port: 0, host: "127.0.0.1", model: "sim-chat", tokensPerSecond: 40 });
  const base = `http://127.0.0.1:${h.port}`;
  const r = await post(base, "/v1/chat/completions", { messages: hello, max_tokens: 8, stream: true });
  const closed = h.close();
  const events = sse(await r.text());
  assert.equal(events.at(-1), "[DONE]");
  await closed;
});
