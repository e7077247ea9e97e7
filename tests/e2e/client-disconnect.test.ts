// A client that leaves mid-answer cancels the engine's request: the sim, like vLLM, counts it in
// vllm:request_success_total{finished_reason="abort"}. A slow sim (5 tokens/s) keeps each answer
// in flight long enough for the client to go.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

describe("a client that disconnects cancels the engine's request", () => {
  let p: Platform;
  let key: string;
  let engineUrl: string;
  const model = uniqueModel("e2e-leave");

  /** The engine's count of requests that ended the given way. */
  const finished = async (reason: "abort" | "length" | "stop"): Promise<number> => {
    const text = await (await fetch(`${engineUrl}/metrics`)).text();
    const line = text.split("\n").find((l) => l.startsWith("vllm:request_success_total{") && l.includes(`finished_reason="${reason}"`));
    assert.ok(line, `the engine reports finished_reason="${reason}"`);
    return Number(line.split(" ").pop());
  };
  /** Polls until the count reaches want (bounded), returning the last count seen. */
  const waitFinished = async (reason: "abort", want: number): Promise<number> => {
    let n = await finished(reason);
    for (let i = 0; i < 100 && n < want; i++) {
      await new Promise((r) => setTimeout(r, 100));
      n = await finished(reason);
    }
    return n;
  };
  const start = (body: Record<string, unknown>, signal: AbortSignal) =>
    fetch(`${p.clientUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "tell me a long story" }], max_tokens: 500, ...body }),
      signal,
    });

  before(async () => {
    p = await startPlatform();
    key = (await p.newKey()).key;
    await p.serve(model, { args: ["--tokens-per-second", "5"] });
    const m = await p.admin<{ replicas: { url: string; state: string }[] }>("GET", `/models/${model}`);
    engineUrl = m.replicas.find((r) => r.state === "ready")!.url.replace(/\/+$/, "");
  });
  after(async () => {
    await p?.stop();
  });

  it("mid-stream: after the first chunks arrive", async () => {
    const before = await finished("abort");
    const leave = new AbortController();
    const r = await start({ stream: true }, leave.signal);
    assert.equal(r.status, 200);
    const reader = r.body!.getReader();
    const first = await reader.read();
    assert.ok(!first.done && new TextDecoder().decode(first.value).includes("data:"), "the stream had begun");
    leave.abort();
    await reader.cancel().catch(() => undefined);
    assert.equal(await waitFinished("abort", before + 1), before + 1, "the engine's request was aborted, once");
  });

  it("before the answer: a request not streamed, left while the engine works", async () => {
    const before = await finished("abort");
    const length = await finished("length");
    const leave = new AbortController();
    const pending = start({}, leave.signal).catch((err: unknown) => err);
    // The engine has the request once its in-flight gauge shows it; then leave.
    let running = 0;
    for (let i = 0; i < 100 && running < 1; i++) {
      const text = await (await fetch(`${engineUrl}/metrics`)).text();
      running = Number(/^vllm:num_requests_running\{[^}]*\} (\S+)/m.exec(text)?.[1] ?? 0);
      if (running < 1) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(running, 1, "the engine was working on it");
    leave.abort();
    assert.equal(((await pending) as Error).name, "AbortError");
    assert.equal(await waitFinished("abort", before + 1), before + 1);
    assert.equal(await finished("length"), length, "it did not run to its end");
  });

  it("keeps serving afterwards", async () => {
    const r = await start({ max_tokens: 2 }, new AbortController().signal);
    assert.equal(r.status, 200);
    assert.equal(((await r.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens, 2);
  });
});
