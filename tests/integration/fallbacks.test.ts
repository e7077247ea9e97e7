// Fallbacks through the real platform: a model whose one replica has one slot (LLMGW_REPLICA_SLOTS=1)
// sends a request to its fallback only while that slot is busy, with the model rewritten and
// `x-llmgw-fallback` on the answer; a model with no ready replica falls back at once.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

describe("fallbacks", () => {
  let p: Platform;
  let key: string;
  const first = uniqueModel("fb-first");
  const second = uniqueModel("fb-second");
  const asleep = uniqueModel("fb-asleep");

  function chat(model: string, extra: Record<string, unknown> = {}): Promise<Response> {
    return fetch(`${p.clientUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hello" }], max_tokens: 2, ...extra }),
    });
  }

  before(async () => {
    p = await startPlatform({ env: { LLMGW_REPLICA_SLOTS: "1" } });
    key = (await p.newKey()).key;
    const version = [{ version: "v1", engine: "sim" }];
    await p.admin("POST", "/models", { name: first, versions: version, fallbacks: [second] });
    await p.admin("POST", "/models", { name: asleep, versions: version, fallbacks: [second] });
    // Both answer at 20 tokens a second, so one long request holds a model's only slot.
    for (const m of [first, second]) await p.serve(m, { args: ["--tokens-per-second", "20"] });
    // The gateway reads the catalog (and so the fallbacks) every few seconds: wait for it, bounded.
    for (let i = 0; i < 150; i++) {
      const r = await chat(asleep);
      await r.body?.cancel();
      if (r.status === 200) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail("the gateway never fell back from the model with no replica");
  });

  after(async () => {
    await p?.stop();
  });

  it("a model with room answers itself: no fallback header", async () => {
    const r = await chat(first);
    const body = (await r.json()) as { model: string };
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("x-llmgw-fallback"), null);
    assert.equal(body.model, first);
  });

  it("a fallback fires only when the first model is full", async () => {
    // One long streamed request takes the first model's only slot; its first bytes prove it is running.
    const slow = await chat(first, { max_tokens: 80, stream: true });
    assert.equal(slow.status, 200);
    assert.equal(slow.headers.get("x-llmgw-fallback"), null);
    const reader = slow.body!.getReader();
    await reader.read();

    const r = await chat(first);
    const body = (await r.json()) as { model: string; choices: unknown[] };
    assert.equal(r.status, 200, JSON.stringify(body));
    assert.equal(r.headers.get("x-llmgw-fallback"), second);
    assert.equal(body.model, second, "answered by the fallback, its model in the body");
    assert.equal(body.choices.length, 1);

    // The slow one finishes on the first model; then the first model has room again.
    let text = "";
    const decoder = new TextDecoder();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value);
    assert.match(text, /data: \[DONE\]/);
    assert.ok(!text.includes(`"model":"${second}"`), "a request that started on the first model stays there");
    const again = await chat(first);
    assert.equal(again.status, 200);
    assert.equal(again.headers.get("x-llmgw-fallback"), null);
    assert.equal(((await again.json()) as { model: string }).model, first);
  });

  it("when the fallback is full too, the request waits for its own model", async () => {
    const holdFirst = await chat(first, { max_tokens: 40, stream: true });
    const holdSecond = await chat(second, { max_tokens: 40, stream: true });
    const readers = [holdFirst.body!.getReader(), holdSecond.body!.getReader()];
    await Promise.all(readers.map((r) => r.read()));
    const r = await chat(first);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("x-llmgw-fallback"), null);
    assert.equal(((await r.json()) as { model: string }).model, first);
    for (const reader of readers) while (!(await reader.read()).done);
  });

  it("a model with no ready replica falls back at once", async () => {
    const r = await chat(asleep);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("x-llmgw-fallback"), second);
    assert.equal(((await r.json()) as { model: string }).model, second);
  });

  it("ctl model show names the fallbacks", async () => {
    const shown = await p.ctl(["model", "show", first]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`fallbacks: ${second}\\n`));
    assert.deepEqual((JSON.parse((await p.ctl(["model", "show", first, "--json"])).stdout) as { fallbacks: string[] }).fallbacks, [second]);
  });

  it("a fallback is a catalog field: a model must not name itself", async () => {
    await assert.rejects(p.admin("POST", "/models", { name: first, versions: [{ version: "v1", engine: "sim" }], fallbacks: [first] }), /fallbacks: a model cannot fall back to itself/);
  });
});
