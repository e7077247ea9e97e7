// What /v1/models tells a client (loaded or not, context length, longest answer, owner, licence —
// from the catalog the gateway keeps in memory) and the limits a request is held to: max_tokens
// and max_completion_tokens at most the served version's max_output (a 400 naming the field, on
// the OpenAI and Anthropic routes), each embeddings input within its context length.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

type Described = OpenAI.Model & { loaded: boolean; replicas: number; context_length: number | null; max_output: number | null; licence: string | null };

describe("model information and the limits it sets", () => {
  let p: Platform;
  let key: string;
  let client: OpenAI;
  const served = uniqueModel("e2e-info");
  const idle = uniqueModel("e2e-idle");

  const keyFor = async (models: string[] = []) => (await p.newKey({ args: models.flatMap((m) => ["--model", m]) })).key;
  const listed = async (c: OpenAI) => {
    const out: Described[] = [];
    for await (const m of c.models.list()) out.push(m as Described);
    return out;
  };

  before(async () => {
    p = await startPlatform();
    await p.admin("POST", "/models", {
      name: served,
      owner: "acme-labs",
      licence: "apache-2.0",
      versions: [{ version: "v1", engine: "sim", context_length: 2048, max_output: 64 }],
    });
    await p.admin("POST", "/models", { name: idle, owner: "other-co", versions: [{ version: "v3", engine: "sim", context_length: 8192, max_output: 512 }] });
    await p.serve(served, { engine: null });
    key = await keyFor();
    client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, maxRetries: 0 });
    // The gateway reads the catalog every 5 s: wait (bounded) until both models are in it.
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && (await listed(client)).filter((m) => m.id === served || m.id === idle).length < 2) await new Promise((res) => setTimeout(res, 250));
  });
  after(async () => {
    await p?.stop();
  });

  it("lists served and catalog-only models with loaded, context length, longest answer, owner and licence", async () => {
    const all = await listed(client);
    const s = all.find((m) => m.id === served);
    const i = all.find((m) => m.id === idle);
    assert.deepEqual(
      { loaded: s?.loaded, replicas: s?.replicas, context_length: s?.context_length, max_output: s?.max_output, owned_by: s?.owned_by, licence: s?.licence, object: s?.object },
      { loaded: true, replicas: 1, context_length: 2048, max_output: 64, owned_by: "acme-labs", licence: "apache-2.0", object: "model" },
    );
    assert.deepEqual(
      { loaded: i?.loaded, replicas: i?.replicas, context_length: i?.context_length, max_output: i?.max_output, owned_by: i?.owned_by, licence: i?.licence },
      { loaded: false, replicas: 0, context_length: 8192, max_output: 512, owned_by: "other-co", licence: null },
    );
    assert.ok(s!.created > 0, "created: when the catalog got it");
  });

  it("retrieves one model, loaded or not; an unknown one is a NotFoundError", async () => {
    const s = (await client.models.retrieve(served)) as Described;
    assert.equal(s.loaded, true);
    assert.equal(s.max_output, 64);
    const i = (await client.models.retrieve(idle)) as Described;
    assert.equal(i.loaded, false);
    assert.equal(i.context_length, 8192);
    await assert.rejects(client.models.retrieve("no-such-model-here"), OpenAI.NotFoundError);
  });

  it("a key limited to some models lists only those and may not retrieve the others", async () => {
    const limited = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: await keyFor([served]), maxRetries: 0 });
    assert.deepEqual((await listed(limited)).map((m) => m.id), [served]);
    await assert.rejects(limited.models.retrieve(idle), OpenAI.PermissionDeniedError);
  });

  it("max_tokens and max_completion_tokens above the served version's max_output are a 400 naming the field", async () => {
    const messages = [{ role: "user" as const, content: "hi" }];
    const ok = await client.chat.completions.create({ model: served, messages, max_tokens: 64 });
    assert.ok(ok.usage!.completion_tokens <= 64);
    for (const field of ["max_tokens", "max_completion_tokens"] as const) {
      await assert.rejects(client.chat.completions.create({ model: served, messages, [field]: 65 }), (e: unknown) => {
        assert.ok(e instanceof OpenAI.BadRequestError, String(e));
        assert.equal((e.error as { param?: string }).param, field);
        assert.match(e.message, /at most 64/);
        return true;
      });
    }
    await assert.rejects(client.completions.create({ model: served, prompt: "x", max_tokens: 1000 }), (e: unknown) => e instanceof OpenAI.BadRequestError && (e.error as { param?: string }).param === "max_tokens");
  });

  it("/v1/messages: max_tokens above max_output is Anthropic's invalid_request_error", async () => {
    const anthropic = new Anthropic({ baseURL: p.clientUrl, apiKey: key, maxRetries: 0 });
    const ok = await anthropic.messages.create({ model: served, max_tokens: 64, messages: [{ role: "user", content: "hi" }] });
    assert.equal(ok.type, "message");
    await assert.rejects(anthropic.messages.create({ model: served, max_tokens: 65, messages: [{ role: "user", content: "hi" }] }), (e: unknown) => {
      assert.ok(e instanceof Anthropic.BadRequestError, String(e));
      assert.equal((e.error as { error: { type: string } }).error.type, "invalid_request_error");
      assert.match(e.message, /max_tokens/);
      return true;
    });
  });

  it("embeddings: each input of a batch is checked against the context length and the long one named", async () => {
    const fits = "a".repeat(2048 * 4); // 2048 tokens at 4 characters each
    const r = await client.embeddings.create({ model: served, input: ["short", fits] });
    assert.equal(r.data.length, 2);
    await assert.rejects(client.embeddings.create({ model: served, input: ["short", "also short", fits + "a"] }), (e: unknown) => {
      assert.ok(e instanceof OpenAI.BadRequestError, String(e));
      assert.equal((e.error as { param?: string }).param, "input.2");
      return true;
    });
    await assert.rejects(client.embeddings.create({ model: served, input: fits + "a" }), (e: unknown) => e instanceof OpenAI.BadRequestError && (e.error as { param?: string }).param === "input");
    await assert.rejects(
      client.embeddings.create({ model: served, input: [[1, 2, 3], Array.from({ length: 2049 }, () => 7)] }),
      (e: unknown) => e instanceof OpenAI.BadRequestError && (e.error as { param?: string }).param === "input.1",
    );
  });
});
