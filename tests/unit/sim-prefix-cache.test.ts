// The sim's prefix-cache model: which prompts count as the same beginning, hits counted in tokens
// as vLLM does, and eviction; plus LLMGW_ADMISSION=off, the setting the admission benchmark compares.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PREFIX_CACHE_CHARS, PREFIX_CACHE_ENTRIES, PREFIX_CACHE_TTL_MS, PrefixCache, promptPrefix } from "../../agent/engines/sim/prefix-cache.ts";
import { Admission } from "../../gateway/router/admission.ts";
import { loadConfig } from "../../common/config.ts";

const long = "s".repeat(PREFIX_CACHE_CHARS);
const chat = (...contents: string[]) => ({ messages: contents.map((content) => ({ role: "user", content })) });

describe("the sim's prefix cache", () => {
  it("sees the same beginning across turns, a different one elsewhere, and none in a short prompt", () => {
    const a = promptPrefix(chat(long, "first question"), 70);
    assert.notEqual(a.hash, 0);
    assert.equal(a.tokens, PREFIX_CACHE_CHARS / 4);
    assert.equal(promptPrefix(chat(long, "first question", "an answer", "second question"), 80).hash, a.hash);
    assert.equal(promptPrefix({ messages: [{ role: "user", content: [{ type: "text", text: long }] }] }, 64).hash, a.hash);
    assert.notEqual(promptPrefix(chat("x" + long), 70).hash, a.hash);
    assert.equal(promptPrefix(chat("short"), 2).hash, 0);
  });

  it("counts queried and hit tokens; a hit needs an earlier query within the TTL", () => {
    const c = new PrefixCache();
    const p = promptPrefix(chat(long, "q"), 70);
    assert.equal(c.lookup(p, 0), false);
    assert.equal(c.lookup(p, 1_000), true);
    assert.equal(c.lookup(p, 1_000 + PREFIX_CACHE_TTL_MS + 1), false, "forgotten after the TTL");
    assert.equal(c.lookup(promptPrefix(chat("short"), 2), 0), false);
    assert.equal(c.queriedTokens, 70 * 3 + 2);
    assert.equal(c.hitTokens, PREFIX_CACHE_CHARS / 4);
  });

  it("evicts the oldest beyond its size", () => {
    const c = new PrefixCache();
    const first = { hash: 1, tokens: 64, promptTokens: 64 };
    c.lookup(first, 0);
    for (let i = 2; i <= PREFIX_CACHE_ENTRIES + 1; i++) c.lookup({ hash: i, tokens: 64, promptTokens: 64 }, 0);
    assert.equal(c.lookup(first, 0), false);
  });
});

describe("LLMGW_ADMISSION", () => {
  it("is on unless set to off, and refuses anything else", () => {
    assert.equal(loadConfig({}).LLMGW_ADMISSION, "on");
    assert.equal(loadConfig({ LLMGW_ADMISSION: "on" }).LLMGW_ADMISSION, "on");
    assert.equal(loadConfig({ LLMGW_ADMISSION: "off" }).LLMGW_ADMISSION, "off");
    assert.throws(() => loadConfig({ LLMGW_ADMISSION: "no" }), /LLMGW_ADMISSION/);
  });

  it("off: every band goes at once, past the slots and the band's share", () => {
    const a = new Admission(() => 1, undefined, false);
    for (let i = 0; i < 5; i++) assert.ok(a.tryAdmit("bulk"));
    assert.equal(a.holding("bulk"), 5);
    a.release("bulk");
    assert.equal(a.holding("bulk"), 4);
  });
});
