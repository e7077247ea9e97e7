// The answer cache's keys (gateway/cache/request-key.ts): what makes two requests the same question.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { cacheableSampling, canonicalJson, requestKeys } from "../../gateway/cache/request-key.ts";

const chat = (extra: Record<string, unknown> = {}) => ({ model: "m", temperature: 0, messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hi there" }], ...extra });
const keys = (body: Record<string, unknown>, project = "p1", route = "/v1/chat/completions") => requestKeys(project, route, body, "emb");

describe("answer cache keys", () => {
  it("key order and the fields that do not change the answer make no difference", () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } }), '{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}');
    const a = keys(chat());
    const reordered = keys({ messages: chat().messages, temperature: 0, model: "m", user: "alice", metadata: { x: "1" }, store: true });
    assert.equal(reordered.exact, a.exact);
  });

  it("the project, the route, the model, sampling, tools and framing each make another key", () => {
    const a = keys(chat()).exact;
    for (const other of [
      keys(chat(), "p2").exact,
      keys(chat(), "p1", "/v1/messages").exact,
      keys(chat({ model: "n" })).exact,
      keys(chat({ max_tokens: 5 })).exact,
      keys(chat({ tools: [{ type: "function", function: { name: "f" } }] })).exact,
      keys(chat({ response_format: { type: "json_object" } })).exact,
      keys(chat({ stream: true })).exact,
    ])
      assert.notEqual(other, a);
    assert.notEqual(keys(chat({ stream: true })).exact, keys(chat({ stream: true, stream_options: { include_usage: true } })).exact);
  });

  it("the similar prefix leaves out the last user turn only", () => {
    const a = keys(chat());
    assert.equal(a.lastUser, "Hi there");
    const reworded = keys(chat({ messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Hello!" }] }));
    assert.equal(reworded.prefix, a.prefix);
    assert.notEqual(reworded.exact, a.exact);
    const otherSystem = keys(chat({ messages: [{ role: "system", content: "Be long." }, { role: "user", content: "Hi there" }] }));
    assert.notEqual(otherSystem.prefix, a.prefix);
    assert.notEqual(keys(chat(), "p2").prefix, a.prefix);
    assert.notEqual(requestKeys("p1", "/v1/chat/completions", chat(), "other-embedder").prefix, a.prefix);
  });

  it("only a last turn of plain user text is embedded", () => {
    const parts = keys(chat({ messages: [{ role: "user", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] }] }));
    assert.equal(parts.lastUser, "a\nb");
    const picture = keys(chat({ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:," } }] }] }));
    assert.equal(picture.prefix, null);
    const tool = keys(chat({ messages: [{ role: "user", content: "x" }, { role: "tool", content: "y", tool_call_id: "1" }] }));
    assert.equal(tool.lastUser, null);
    assert.equal(requestKeys("p1", "/v1/chat/completions", chat(), null).prefix, null);
  });

  it("sampled requests are cached only where allowed; no temperature counts as sampled; embeddings and rerank sample nothing", () => {
    const chatRoute = "/v1/chat/completions";
    assert.equal(cacheableSampling(chatRoute, { temperature: 0 }, false), true);
    assert.equal(cacheableSampling(chatRoute, { temperature: 0.2 }, false), false);
    assert.equal(cacheableSampling(chatRoute, {}, false), false);
    assert.equal(cacheableSampling(chatRoute, { temperature: 1 }, true), true);
    assert.equal(cacheableSampling("/v1/embeddings", {}, false), true);
    assert.equal(cacheableSampling("/v1/rerank", {}, false), true);
  });
});
