// A prompt held to the served version's context length by the gateway, before any engine sees it:
// the messages' (or prompt's) text at 4 characters a token plus the max_tokens asked for must fit,
// else a 400 in the route's own shape — OpenAI's context_length_exceeded through the official openai
// client, Anthropic's invalid_request_error through its SDK. The sim engine's own refusals carry no
// code (and it takes 4096 tokens, not the catalog's 2048), so context_length_exceeded here is the
// gateway's; a prompt just within is served, its prompt_tokens equal to the gateway's estimate. Prompts
// this long are counted by the sim's /tokenize (exact, so the messages say no "about").
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

const CONTEXT = 2048;
const ANSWER = 8;
/** The most text that, with an ANSWER-token answer, fits: 4 characters a token. */
const FITS = "x".repeat((CONTEXT - ANSWER) * 4);

describe("chat, completions and messages prompts held to the context length", () => {
  let p: Platform;
  let openai: OpenAI;
  let anthropic: Anthropic;
  const model = uniqueModel("e2e-context");

  const tooLong = (param: string) => (e: unknown) => {
    assert.ok(e instanceof OpenAI.BadRequestError, String(e));
    assert.equal(e.status, 400);
    assert.equal(e.code, "context_length_exceeded");
    assert.equal((e.error as { param?: string }).param, param);
    assert.equal((e.error as { type?: string }).type, "invalid_request_error");
    assert.match(e.message, /maximum context length is 2048 tokens/);
    return true;
  };

  before(async () => {
    p = await startPlatform();
    await p.admin("POST", "/models", { name: model, versions: [{ version: "v1", engine: "sim", context_length: CONTEXT, max_output: 64 }] });
    await p.serve(model, { engine: null });
    const { key } = await p.newKey();
    openai = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: p.clientUrl, apiKey: key, maxRetries: 0 });
    // The gateway reads the catalog every 5 s: wait (bounded) until it holds the model's context length.
    const described = async () => ((await openai.models.retrieve(model).catch(() => null)) as { context_length?: number } | null)?.context_length;
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && (await described()) !== CONTEXT) await new Promise((res) => setTimeout(res, 250));
    assert.equal(await described(), CONTEXT);
  });
  after(async () => {
    await p?.stop();
  });

  it("/v1/chat/completions: a prompt just within is served; one character more, or one token more asked, is context_length_exceeded", async () => {
    const messages = (text: string) => [{ role: "user" as const, content: text }];
    const ok = await openai.chat.completions.create({ model, messages: messages(FITS), max_tokens: ANSWER });
    assert.equal(ok.usage!.prompt_tokens, CONTEXT - ANSWER, "the sim counts as the gateway estimates");
    assert.equal(ok.usage!.completion_tokens, ANSWER);
    await assert.rejects(openai.chat.completions.create({ model, messages: messages(FITS + "x"), max_tokens: ANSWER }), tooLong("messages"));
    await assert.rejects(openai.chat.completions.create({ model, messages: messages(FITS), max_completion_tokens: ANSWER + 1 }), tooLong("messages"));
    await assert.rejects(openai.chat.completions.create({ model, messages: messages(FITS + "x"), max_tokens: ANSWER, stream: true }), tooLong("messages"));
  });

  it("/v1/chat/completions: the text of every message and content part counts, and a prompt alone can be over", async () => {
    const half = "x".repeat((CONTEXT / 2) * 4);
    await assert.rejects(
      openai.chat.completions.create({ model, messages: [{ role: "system", content: half }, { role: "user", content: [{ type: "text", text: half + "x" }] }] }),
      tooLong("messages"),
    );
    const ok = await openai.chat.completions.create({ model, messages: [{ role: "system", content: half.slice(4) }, { role: "user", content: [{ type: "text", text: half }] }], max_tokens: 1 });
    assert.equal(ok.usage!.prompt_tokens, CONTEXT - 1);
  });

  it("/v1/completions: the prompt and max_tokens, the same way", async () => {
    const ok = await openai.completions.create({ model, prompt: FITS, max_tokens: ANSWER });
    assert.equal(ok.usage!.prompt_tokens, CONTEXT - ANSWER);
    await assert.rejects(openai.completions.create({ model, prompt: ["short", FITS + "x"], max_tokens: ANSWER }), tooLong("prompt"));
  });

  it("/v1/messages: over the context is Anthropic's invalid_request_error; just within is answered", async () => {
    const ok = await anthropic.messages.create({ model, max_tokens: ANSWER, messages: [{ role: "user", content: FITS }] });
    assert.equal(ok.usage.input_tokens, CONTEXT - ANSWER);
    const refused = (pattern: RegExp) => (e: unknown) => {
      assert.ok(e instanceof Anthropic.BadRequestError, String(e));
      assert.equal(e.status, 400);
      assert.deepEqual((e.error as { type: string; error: { type: string } }).type, "error");
      assert.equal((e.error as { error: { type: string } }).error.type, "invalid_request_error");
      assert.match(e.message, pattern);
      return true;
    };
    await assert.rejects(
      anthropic.messages.create({ model, max_tokens: ANSWER, system: "x", messages: [{ role: "user", content: FITS }] }),
      refused(/exceed context limit: 2041 \+ 8 > 2048/),
    );
    await assert.rejects(anthropic.messages.create({ model, max_tokens: 1, messages: [{ role: "user", content: FITS + "x".repeat(ANSWER * 4 + 1) }] }), refused(/prompt is too long: 2049 tokens > 2048 maximum/));
  });
});
