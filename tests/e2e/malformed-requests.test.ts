// Malformed requests against a real gateway serving a sim model: each one is a 4xx in the route's
// own error shape whose message names the field at fault, and a valid request right after it
// still succeeds — the gateway keeps serving throughout.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

type Route = "/v1/chat/completions" | "/v1/completions" | "/v1/embeddings" | "/v1/messages";

interface Case {
  name: string;
  route: Route;
  /** An object is sent as JSON; a string is sent as it is. */
  body: unknown;
  /** The field the message must name (the OpenAI `param` too); a RegExp for errors that are not about one field. */
  field: string | RegExp;
  status?: number;
}

const M = "MODEL"; // replaced by the served model's name
const user = (content: unknown) => [{ role: "user", content }];
const chat = (extra: Record<string, unknown>) => ({ model: M, messages: user("hi"), max_tokens: 2, ...extra });
const part = (p: unknown) => chat({ messages: user([p]) });
const image = (url: string) => part({ type: "image_url", image_url: { url } });
const anthropic = (extra: Record<string, unknown>) => ({ model: M, max_tokens: 2, messages: user("hi"), ...extra });
const block = (b: unknown) => anthropic({ messages: user([b]) });
const PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const nested = (depth: number): unknown => (depth === 0 ? [] : { a: nested(depth - 1) });

const CASES: Case[] = [
  // /v1/chat/completions
  { name: "model missing", route: "/v1/chat/completions", body: { messages: user("hi") }, field: "model" },
  { name: "model a number", route: "/v1/chat/completions", body: chat({ model: 42 }), field: "model" },
  { name: "model empty", route: "/v1/chat/completions", body: chat({ model: "" }), field: "model" },
  { name: "model a huge string", route: "/v1/chat/completions", body: chat({ model: "m".repeat(100_000) }), field: "model" },
  { name: "messages missing", route: "/v1/chat/completions", body: { model: M }, field: "messages" },
  { name: "messages empty", route: "/v1/chat/completions", body: chat({ messages: [] }), field: "messages" },
  { name: "messages a string", route: "/v1/chat/completions", body: chat({ messages: "hi" }), field: "messages" },
  { name: "unknown role", route: "/v1/chat/completions", body: chat({ messages: [{ role: "wizard", content: "hi" }] }), field: "messages.0.role" },
  { name: "role missing", route: "/v1/chat/completions", body: chat({ messages: [{ content: "hi" }] }), field: "messages.0.role" },
  { name: "content a number", route: "/v1/chat/completions", body: chat({ messages: user(7) }), field: "messages.0.content" },
  { name: "unknown content part type", route: "/v1/chat/completions", body: part({ type: "hologram", data: "x" }), field: "messages.0.content.0.type" },
  { name: "text part without text", route: "/v1/chat/completions", body: part({ type: "text" }), field: "messages.0.content.0.text" },
  { name: "nested garbage as text", route: "/v1/chat/completions", body: part({ type: "text", text: nested(50) }), field: "messages.0.content.0.text" },
  { name: "image data URL with bad base64", route: "/v1/chat/completions", body: image("data:image/png;base64,!!!not*base64!!!"), field: "messages.0.content.0.image_url.url" },
  { name: "image data URL of bad length", route: "/v1/chat/completions", body: image(`data:image/png;base64,${PNG_1PX.slice(0, -3)}`), field: "messages.0.content.0.image_url.url" },
  { name: "image data URL that is not a picture", route: "/v1/chat/completions", body: image("data:text/plain;base64,aGVsbG8="), field: "messages.0.content.0.image_url.url" },
  { name: "image URL neither http nor data", route: "/v1/chat/completions", body: image("ftp://example.invalid/x.png"), field: "messages.0.content.0.image_url.url" },
  { name: "image part without image_url", route: "/v1/chat/completions", body: part({ type: "image_url" }), field: "messages.0.content.0.image_url" },
  { name: "audio part with bad base64", route: "/v1/chat/completions", body: part({ type: "input_audio", input_audio: { data: "%%%", format: "wav" } }), field: "messages.0.content.0.input_audio.data" },
  { name: "negative temperature", route: "/v1/chat/completions", body: chat({ temperature: -1 }), field: "temperature" },
  { name: "temperature too high", route: "/v1/chat/completions", body: chat({ temperature: 5 }), field: "temperature" },
  { name: "temperature a word", route: "/v1/chat/completions", body: chat({ temperature: "hot" }), field: "temperature" },
  { name: "top_p above 1", route: "/v1/chat/completions", body: chat({ top_p: 1.5 }), field: "top_p" },
  { name: "negative max_tokens", route: "/v1/chat/completions", body: chat({ max_tokens: -5 }), field: "max_tokens" },
  { name: "fractional max_tokens", route: "/v1/chat/completions", body: chat({ max_tokens: 1.5 }), field: "max_tokens" },
  { name: "absurd max_tokens", route: "/v1/chat/completions", body: chat({ max_tokens: 1e12 }), field: "max_tokens" },
  { name: "negative max_completion_tokens", route: "/v1/chat/completions", body: chat({ max_completion_tokens: -1 }), field: "max_completion_tokens" },
  { name: "n zero", route: "/v1/chat/completions", body: chat({ n: 0 }), field: "n" },
  { name: "n absurd", route: "/v1/chat/completions", body: chat({ n: 10_000 }), field: "n" },
  { name: "stream a string", route: "/v1/chat/completions", body: chat({ stream: "yes" }), field: "stream" },
  { name: "stream_options a string", route: "/v1/chat/completions", body: chat({ stream: true, stream_options: "usage" }), field: "stream_options" },
  { name: "five stop strings", route: "/v1/chat/completions", body: chat({ stop: ["a", "b", "c", "d", "e"] }), field: "stop" },
  { name: "stop a number", route: "/v1/chat/completions", body: chat({ stop: 3 }), field: "stop" },
  { name: "presence_penalty out of range", route: "/v1/chat/completions", body: chat({ presence_penalty: 3 }), field: "presence_penalty" },
  { name: "logit_bias out of range", route: "/v1/chat/completions", body: chat({ logit_bias: { "50256": 500 } }), field: "logit_bias.50256" },
  { name: "top_logprobs negative", route: "/v1/chat/completions", body: chat({ top_logprobs: -1 }), field: "top_logprobs" },
  { name: "tool without function", route: "/v1/chat/completions", body: chat({ tools: [{ type: "function" }] }), field: "tools.0.function" },
  { name: "tool name with spaces", route: "/v1/chat/completions", body: chat({ tools: [{ type: "function", function: { name: "do it now" } }] }), field: "tools.0.function.name" },
  { name: "tool_choice unknown", route: "/v1/chat/completions", body: chat({ tool_choice: "sometimes" }), field: "tool_choice" },
  { name: "tool call of the wrong type", route: "/v1/chat/completions", body: chat({ messages: [{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "magic", function: { name: "f", arguments: "{}" } }] }] }), field: "messages.0.tool_calls.0.type" },
  { name: "name a huge string", route: "/v1/chat/completions", body: chat({ messages: [{ role: "user", content: "hi", name: "n".repeat(10_000) }] }), field: "messages.0.name" },
  { name: "user a huge string", route: "/v1/chat/completions", body: chat({ user: "u".repeat(10_000) }), field: "user" },
  { name: "seed a word", route: "/v1/chat/completions", body: chat({ seed: "abc" }), field: "seed" },
  { name: "messages of nested arrays", route: "/v1/chat/completions", body: chat({ messages: [[[[]]]] }), field: "messages.0" },
  { name: "body an array", route: "/v1/chat/completions", body: [1, 2, 3], field: "body" },
  { name: "body JSON null", route: "/v1/chat/completions", body: "null", field: /JSON/ },
  { name: "invalid JSON", route: "/v1/chat/completions", body: "{not json", field: /JSON/ },
  { name: "truncated JSON", route: "/v1/chat/completions", body: '{"model": "x", "messages": [', field: /JSON/ },
  // /v1/completions
  { name: "prompt missing", route: "/v1/completions", body: { model: M }, field: "prompt" },
  { name: "prompt a number", route: "/v1/completions", body: { model: M, prompt: 5 }, field: "prompt" },
  { name: "negative token ids", route: "/v1/completions", body: { model: M, prompt: [1, -1] }, field: "prompt.1" },
  { name: "max_tokens a word", route: "/v1/completions", body: { model: M, prompt: "x", max_tokens: "lots" }, field: "max_tokens" },
  { name: "logprobs above 5", route: "/v1/completions", body: { model: M, prompt: "x", logprobs: 10 }, field: "logprobs" },
  { name: "echo a string", route: "/v1/completions", body: { model: M, prompt: "x", echo: "yes" }, field: "echo" },
  // /v1/embeddings
  { name: "input missing", route: "/v1/embeddings", body: { model: M }, field: "input" },
  { name: "input empty", route: "/v1/embeddings", body: { model: M, input: [] }, field: "input" },
  { name: "input of 3000 strings", route: "/v1/embeddings", body: { model: M, input: Array.from({ length: 3000 }, () => "x") }, field: "input" },
  { name: "input an object", route: "/v1/embeddings", body: { model: M, input: { text: "x" } }, field: "input" },
  { name: "unknown encoding_format", route: "/v1/embeddings", body: { model: M, input: "x", encoding_format: "hex" }, field: "encoding_format" },
  { name: "negative dimensions", route: "/v1/embeddings", body: { model: M, input: "x", dimensions: -3 }, field: "dimensions" },
  // /v1/messages (Anthropic)
  { name: "max_tokens missing", route: "/v1/messages", body: { model: M, messages: user("hi") }, field: "max_tokens" },
  { name: "negative max_tokens", route: "/v1/messages", body: anthropic({ max_tokens: -1 }), field: "max_tokens" },
  { name: "system role in messages", route: "/v1/messages", body: anthropic({ messages: [{ role: "system", content: "hi" }] }), field: "messages.0.role" },
  { name: "unknown block type", route: "/v1/messages", body: block({ type: "video", data: "x" }), field: "messages.0.content.0.type" },
  { name: "image with bad base64", route: "/v1/messages", body: block({ type: "image", source: { type: "base64", media_type: "image/png", data: "@@@@" } }), field: "messages.0.content.0.source.data" },
  { name: "image of an unknown media type", route: "/v1/messages", body: block({ type: "image", source: { type: "base64", media_type: "image/bmp", data: PNG_1PX } }), field: "messages.0.content.0.source.media_type" },
  { name: "temperature above 1", route: "/v1/messages", body: anthropic({ temperature: 1.5 }), field: "temperature" },
  { name: "system a number", route: "/v1/messages", body: anthropic({ system: 12 }), field: "system" },
  { name: "tool schema not an object", route: "/v1/messages", body: anthropic({ tools: [{ name: "t", input_schema: { type: "array" } }] }), field: "tools.0.input_schema.type" },
  { name: "unknown tool_choice", route: "/v1/messages", body: anthropic({ tool_choice: { type: "maybe" } }), field: "tool_choice.type" },
  { name: "messages empty", route: "/v1/messages", body: anthropic({ messages: [] }), field: "messages" },
  { name: "thinking budget zero", route: "/v1/messages", body: anthropic({ thinking: { type: "enabled", budget_tokens: 0 } }), field: "thinking.budget_tokens" },
  { name: "stop_sequences a string", route: "/v1/messages", body: anthropic({ stop_sequences: "END" }), field: "stop_sequences" },
  { name: "invalid JSON", route: "/v1/messages", body: '{"model":', field: /JSON/ },
];

const VALID: Record<Route, unknown> = {
  "/v1/chat/completions": chat({ messages: user([{ type: "text", text: "hi" }, { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_1PX}` } }]) }),
  "/v1/completions": { model: M, prompt: "hi", max_tokens: 2 },
  "/v1/embeddings": { model: M, input: ["hi", "there"] },
  "/v1/messages": block({ type: "image", source: { type: "base64", media_type: "image/png", data: PNG_1PX } }),
};

describe("malformed requests get a 4xx naming the field, and the gateway keeps serving", () => {
  let p: Platform;
  let key: string;
  const model = uniqueModel("e2e-malformed");
  const post = (route: string, body: unknown) =>
    fetch(`${p.clientUrl}${route}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: (typeof body === "string" ? body : JSON.stringify(body)).replaceAll(JSON.stringify(M), JSON.stringify(model)),
    });

  before(async () => {
    p = await startPlatform();
    key = (await p.newKey()).key;
    await p.serve(model);
  });
  after(async () => {
    await p?.stop();
  });

  it(`has at least 50 cases over the four routes (${CASES.length})`, () => {
    assert.ok(CASES.length >= 50);
    assert.deepEqual(new Set(CASES.map((c) => c.route)), new Set(Object.keys(VALID)));
  });

  it("accepts each route's valid request (pictures included)", async () => {
    for (const [route, body] of Object.entries(VALID)) {
      const r = await post(route, body);
      assert.equal(r.status, 200, `${route}: ${await r.text()}`);
    }
  });

  for (const c of CASES) {
    it(`${c.route}: ${c.name}`, async () => {
      const r = await post(c.route, c.body);
      const text = await r.text();
      assert.equal(r.status, c.status ?? 400, text);
      const body = JSON.parse(text) as { type?: string; error: { message: string; type: string; param?: string | null } };
      if (c.route === "/v1/messages") {
        assert.equal(body.type, "error", "Anthropic's shape");
        assert.deepEqual(Object.keys(body.error).sort(), ["message", "type"]);
      } else {
        assert.deepEqual(Object.keys(body.error).sort(), ["code", "message", "param", "type"], "OpenAI's shape");
        if (typeof c.field === "string") assert.equal(body.error.param, c.field === "body" ? null : c.field);
      }
      assert.equal(body.error.type, "invalid_request_error");
      if (typeof c.field === "string") assert.ok(body.error.message.startsWith(`${c.field}: `), `names ${c.field}: ${body.error.message}`);
      else assert.match(body.error.message, c.field);
      assert.ok(body.error.message.length < 600, "a message, not an echo of the input");
      const ok = await post(c.route, VALID[c.route]);
      assert.equal(ok.status, 200, `still serving ${c.route}: ${await ok.text()}`);
    });
  }

  it("a query string or a trailing slash changes nothing: the hot path answers as for the bare route", async () => {
    // Express serves no inference route: an answer other than its 404 here is the hot path's.
    const sample = [...Object.entries(VALID).map(([route, body]) => ({ route, body })), ...CASES.filter((_, i) => i % 7 === 0)];
    for (const { route, body } of sample) {
      for (const auth of [`Bearer ${key}`, "Bearer sk-llmgw-wrong", null]) {
        const send = (path: string) =>
          fetch(`${p.clientUrl}${path}`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-request-id": "same-id", ...(auth ? { authorization: auth } : {}) },
            body: (typeof body === "string" ? body : JSON.stringify(body)).replaceAll(JSON.stringify(M), JSON.stringify(model)),
          });
        const [bare, queried, slashed] = await Promise.all([send(route), send(`${route}?via=query`), send(`${route}/?a=1&b=2`)]);
        const [a, b, c] = [await bare.text(), await queried.text(), await slashed.text()];
        const what = `${route} (${auth ? auth.slice(0, 20) : "no key"}): ${a.slice(0, 200)}`;
        for (const [other, text] of [[queried, b], [slashed, c]] as const) {
          assert.equal(other.status, bare.status, what);
          assert.equal(other.headers.get("x-request-id"), "same-id");
          assert.equal(other.headers.get("content-type"), bare.headers.get("content-type"), what);
          if (bare.status !== 200) assert.deepEqual(JSON.parse(text), JSON.parse(a), what);
          else assert.deepEqual(Object.keys(JSON.parse(text) as object).sort(), Object.keys(JSON.parse(a) as object).sort(), what);
        }
        assert.equal(bare.headers.get("x-request-id"), "same-id");
      }
    }
  });

  it("answers a body over the limit with 413 in each route's shape, and keeps serving", async () => {
    const huge = "x".repeat(9 * 1024 * 1024); // the gateway takes 8 MB
    for (const route of ["/v1/chat/completions", "/v1/messages"] as const) {
      const r = await post(route, chat({ messages: user(huge) }));
      assert.equal(r.status, 413);
      const body = (await r.json()) as { type?: string; error: { type: string; code?: string; message: string } };
      if (route === "/v1/messages") assert.deepEqual([body.type, body.error.type], ["error", "request_too_large"]);
      else assert.equal(body.error.code, "body_too_large");
      assert.match(body.error.message, /larger/);
      assert.equal((await post(route, VALID[route])).status, 200);
    }
  });
});
