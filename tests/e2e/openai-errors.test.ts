// Every error the client API answers with surfaces as the SDK's own class, through the gateway:
// the official openai client on /v1/chat/completions and @anthropic-ai/sdk on /v1/messages —
// 400, 401, 403 (a key limited to other models), 404, 429 (a key's own rate limit) and 503 (a
// model in the catalog that no replica serves).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

describe("error statuses as the SDKs' classes", () => {
  let p: Platform;
  let key: string;
  let limitedKey: string;
  let ratedKey: string;
  const model = uniqueModel("e2e-errs");
  const unserved = uniqueModel("e2e-unserved");
  const messages = [{ role: "user" as const, content: "hi" }];

  const openai = (apiKey: string) => new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey, maxRetries: 0 });
  const anthropic = (apiKey: string) => new Anthropic({ baseURL: p.clientUrl, apiKey, maxRetries: 0 });
  const chat = (apiKey: string, m = model) => openai(apiKey).chat.completions.create({ model: m, messages, max_tokens: 2 });
  const message = (apiKey: string, m = model) => anthropic(apiKey).messages.create({ model: m, messages, max_tokens: 2 });

  /** Asks until `f` fails other than with `until` (bounded): the gateway reads the catalog and limits every 5 s. */
  async function settled(f: () => Promise<unknown>, until: (e: unknown) => boolean): Promise<unknown> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const err = await f().then(
        () => null,
        (e: unknown) => e,
      );
      if ((err !== null && !until(err)) || Date.now() > deadline) return err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  before(async () => {
    p = await startPlatform();
    await p.serve(model);
    await p.admin("POST", "/models", { name: unserved, versions: [{ version: "v1", engine: "sim" }] });
    key = (await p.newKey()).key;
    limitedKey = (await p.newKey({ args: ["--model", "some-other-model"] })).key;
    const rated = await p.newKey();
    ratedKey = rated.key;
    await p.admin("PUT", `/limits/key/${rated.id}`, { rpm: 1 });
  });
  after(async () => {
    await p?.stop();
  });

  it("openai: 401 AuthenticationError, 403 PermissionDeniedError, 404 NotFoundError, 400 BadRequestError", async () => {
    await assert.rejects(chat("sk-llmgw-not-a-key"), (e: unknown) => e instanceof OpenAI.AuthenticationError && e.status === 401);
    await assert.rejects(chat(limitedKey), (e: unknown) => e instanceof OpenAI.PermissionDeniedError && e.status === 403 && e.code === "model_not_allowed");
    await assert.rejects(chat(key, "no-such-model-anywhere"), (e: unknown) => e instanceof OpenAI.NotFoundError && e.status === 404 && e.code === "model_not_found");
    await assert.rejects(
      openai(key).chat.completions.create({ model, messages, temperature: 5 }),
      (e: unknown) => e instanceof OpenAI.BadRequestError && e.status === 400 && e.param === "temperature",
    );
  });

  it("openai: 429 RateLimitError from the key's own limit, with Retry-After", async () => {
    const err = await settled(() => chat(ratedKey), () => false);
    assert.ok(err instanceof OpenAI.RateLimitError, String(err));
    assert.equal(err.status, 429);
    assert.ok(Number(err.headers?.get("retry-after")) >= 1);
  });

  it("openai: 503 for a model in the catalog that nothing serves is an InternalServerError (an APIError), with Retry-After", async () => {
    const err = await settled(() => chat(key, unserved), (e) => e instanceof OpenAI.NotFoundError);
    assert.ok(err instanceof OpenAI.InternalServerError, String(err));
    assert.ok(err instanceof OpenAI.APIError);
    assert.equal(err.status, 503);
    assert.equal(err.code, "model_not_ready");
    assert.ok(Number(err.headers?.get("retry-after")) >= 1);
  });

  it("anthropic: the same statuses as @anthropic-ai/sdk's classes, in Anthropic's error shape", async () => {
    const type = (e: unknown) => ((e as { error?: { error?: { type?: string } } }).error?.error?.type ?? "");
    await assert.rejects(message("sk-llmgw-not-a-key"), (e: unknown) => e instanceof Anthropic.AuthenticationError && type(e) === "authentication_error");
    await assert.rejects(message(limitedKey), (e: unknown) => e instanceof Anthropic.PermissionDeniedError && type(e) === "permission_error");
    await assert.rejects(message(key, "no-such-model-anywhere"), (e: unknown) => e instanceof Anthropic.NotFoundError && type(e) === "not_found_error");
    await assert.rejects(
      anthropic(key).messages.create({ model, messages, max_tokens: 0 }),
      (e: unknown) => e instanceof Anthropic.BadRequestError && type(e) === "invalid_request_error",
    );
    const limited = await settled(() => message(ratedKey), () => false);
    assert.ok(limited instanceof Anthropic.RateLimitError && type(limited) === "rate_limit_error", String(limited));
    const down = await settled(() => message(key, unserved), (e) => e instanceof Anthropic.NotFoundError);
    assert.ok(down instanceof Anthropic.InternalServerError && down.status === 503 && type(down) === "overloaded_error", String(down));
  });
});
