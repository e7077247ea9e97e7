// The limits a request is held to, from the catalog the registry keeps: the served version's
// max_output and context length (the tighter during a canary, the newest when none is served),
// and the checks that name the field at fault.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import type { PrismaClient } from "../../common/db.ts";
import { ApiError } from "../../gateway/errors.ts";
import { checkRequestLimits } from "../../gateway/router/request-limits.ts";
import { EndpointRegistry } from "../../gateway/router/registry.ts";

const version = (v: string, contextLength: number, maxOutput: number, at: number) => ({ version: v, contextLength, maxOutput, createdAt: new Date(at) });
const replica = (id: string, v: string) => ({ id, modelName: "m", nodeId: "n", url: `http://127.0.0.1:${9000 + Number(id.slice(1))}`, version: { version: v } });

function registryWith(replicas: ReturnType<typeof replica>[]): EndpointRegistry {
  const db = {
    replica: { findMany: async () => replicas },
    model: {
      findMany: async () => [
        { name: "m", owner: "acme", licence: "mit", createdAt: new Date(1000_000), versions: [version("v1", 4096, 512, 1), version("v2", 8192, 256, 2)] },
        { name: "idle", owner: "llmgw", licence: null, createdAt: new Date(0), versions: [version("a", 1000, 100, 1), version("b", 2000, 200, 2)] },
      ],
    },
  } as unknown as PrismaClient;
  return new EndpointRegistry(db, { engineKey: (id) => `key-${id}`, scrapeEveryMs: 60_000 });
}

const refusal = (f: () => void): { param: string | null | undefined; status: number } => {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof ApiError);
    return { param: e.opts.param, status: e.status };
  }
  assert.fail("expected a refusal");
};

describe("request limits", () => {
  const open: EndpointRegistry[] = [];
  after(() => Promise.all(open.map((r) => r.close())));

  it("the served version's limits; the tighter of two during a canary; the newest when none is served", async () => {
    const one = registryWith([replica("r1", "v1")]);
    const canary = registryWith([replica("r1", "v1"), replica("r2", "v2")]);
    open.push(one, canary);
    await Promise.all([one.reload(), canary.reload()]);
    assert.deepEqual(one.limits("m"), { contextLength: 4096, maxOutput: 512 });
    assert.deepEqual(canary.limits("m"), { contextLength: 4096, maxOutput: 256 });
    assert.deepEqual(one.limits("idle"), { contextLength: 2000, maxOutput: 200 });
    assert.equal(one.limits("nope"), null);
    assert.deepEqual(one.knownModels(), ["idle", "m"]);
    assert.equal(one.catalogEntry("m")?.owner, "acme");
  });

  it("max_tokens and max_completion_tokens above max_output are a 400 naming the field", () => {
    const limits = { contextLength: 100, maxOutput: 10 };
    checkRequestLimits("/v1/chat/completions", { max_tokens: 10, max_completion_tokens: 10 }, limits, "m");
    assert.deepEqual(refusal(() => checkRequestLimits("/v1/chat/completions", { max_tokens: 11 }, limits, "m")), { param: "max_tokens", status: 400 });
    assert.deepEqual(refusal(() => checkRequestLimits("/v1/chat/completions", { max_completion_tokens: 11 }, limits, "m")), { param: "max_completion_tokens", status: 400 });
    checkRequestLimits("/v1/chat/completions", { max_tokens: 1_000_000 }, null, "m"); // unknown limits: the engine decides
  });

  it("embeddings: each input against the context length, the first too long named by its index", () => {
    const limits = { contextLength: 10, maxOutput: 10 };
    const fits = "x".repeat(40);
    checkRequestLimits("/v1/embeddings", { input: [fits, "a"] }, limits, "m");
    assert.deepEqual(refusal(() => checkRequestLimits("/v1/embeddings", { input: ["a", fits, fits + "x"] }, limits, "m")), { param: "input.2", status: 400 });
    assert.deepEqual(refusal(() => checkRequestLimits("/v1/embeddings", { input: fits + "x" }, limits, "m")), { param: "input", status: 400 });
    assert.deepEqual(refusal(() => checkRequestLimits("/v1/embeddings", { input: Array.from({ length: 11 }, () => 1) }, limits, "m")), { param: "input", status: 400 });
    assert.deepEqual(refusal(() => checkRequestLimits("/v1/embeddings", { input: [[1], Array.from({ length: 11 }, () => 1)] }, limits, "m")), { param: "input.1", status: 400 });
  });

  it("chat: the messages' text and the answer asked for must fit the context, by the same 4-character estimate", () => {
    const limits = { contextLength: 10, maxOutput: 10 };
    const chat = (text: string, extra: Record<string, unknown> = {}) => ({ messages: [{ role: "system", content: "abcd" }, { role: "user", content: [{ type: "text", text }, { type: "image_url", image_url: { url: "https://x.invalid/p.png" } }] }, { role: "assistant", content: null }], ...extra });
    checkRequestLimits("/v1/chat/completions", chat("x".repeat(36)), limits, "m"); // 40 characters: 10 tokens
    checkRequestLimits("/v1/chat/completions", chat("x".repeat(28), { max_tokens: 2 }), limits, "m");
    checkRequestLimits("/v1/chat/completions", chat("x".repeat(28), { max_tokens: 20, max_completion_tokens: 2 }), { contextLength: 10, maxOutput: 20 }, "m");
    assert.deepEqual(refusal(() => checkRequestLimits("/v1/chat/completions", chat("x".repeat(37)), limits, "m")), { param: "messages", status: 400 });
    assert.deepEqual(refusal(() => checkRequestLimits("/v1/chat/completions", chat("x".repeat(28), { max_tokens: 3 }), limits, "m")), { param: "messages", status: 400 });
    assert.deepEqual(refusal(() => checkRequestLimits("/v1/chat/completions", chat("x".repeat(28), { max_completion_tokens: 3 }), limits, "m")), { param: "messages", status: 400 });
    checkRequestLimits("/v1/chat/completions", chat("x".repeat(1000), { max_tokens: 1000 }), null, "m"); // unknown limits: the engine decides
  });

  it("the refusal is OpenAI's context_length_exceeded in OpenAI's words, and Anthropic's words on /v1/messages", () => {
    const limits = { contextLength: 10, maxOutput: 10 };
    const at = (endpoint: string, body: Record<string, unknown>) => {
      try {
        checkRequestLimits("/v1/chat/completions", body, limits, "m", endpoint);
      } catch (e) {
        assert.ok(e instanceof ApiError && e.opts.code === "context_length_exceeded" && e.kind === "invalid_request");
        return e.message;
      }
      assert.fail("expected a refusal");
    };
    const body = (chars: number, max_tokens: number) => ({ messages: [{ role: "user", content: "x".repeat(chars) }], max_tokens });
    assert.match(at("/v1/chat/completions", body(32, 4)), /maximum context length is 10 tokens\. However, you requested about 12 tokens \(about 8 in the messages, 4 in the completion\)/);
    assert.equal(at("/v1/messages", body(32, 4)), "input length and `max_tokens` exceed context limit: about 8 + 4 > 10, decrease input length or `max_tokens` and try again");
    assert.equal(at("/v1/messages", body(44, 1)), "prompt is too long: about 11 tokens > 10 maximum");
  });

  it("completions: the longest prompt of a batch (text or token ids) and max_tokens must fit", () => {
    const limits = { contextLength: 10, maxOutput: 10 };
    checkRequestLimits("/v1/completions", { prompt: ["x".repeat(32), "y".repeat(32)], max_tokens: 2 }, limits, "m");
    checkRequestLimits("/v1/completions", { prompt: [[1, 2, 3], Array.from({ length: 10 }, () => 7)] }, limits, "m");
    assert.deepEqual(refusal(() => checkRequestLimits("/v1/completions", { prompt: ["a", "x".repeat(33)], max_tokens: 2 }, limits, "m")), { param: "prompt", status: 400 });
    assert.deepEqual(refusal(() => checkRequestLimits("/v1/completions", { prompt: "x".repeat(41) }, limits, "m")), { param: "prompt", status: 400 });
    assert.deepEqual(refusal(() => checkRequestLimits("/v1/completions", { prompt: Array.from({ length: 9 }, () => 7), max_tokens: 2 }, limits, "m")), { param: "prompt", status: 400 });
  });
});
