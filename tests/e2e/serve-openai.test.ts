// One model served end to end: ctl → admin API → serve workflow → agents over gRPC → sim engines →
// router → the official openai client. Also the client API's error answers.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

describe("a model served with 2 replicas, used through the official openai client", () => {
  let p: Platform;
  let key: string;
  const model = uniqueModel("e2e-chat");

  before(async () => {
    p = await startPlatform();
    key = (await p.newKey()).key;
    assert.match(key, /^sk-llmgw-/);
    await p.serve(model, { replicas: 2 });
  });

  after(async () => {
    await p?.stop();
  });

  it("lists the model and its two ready replicas (ctl models, ctl nodes)", async () => {
    const models = JSON.parse((await p.ctl(["models", "--json"])).stdout) as { name: string; ready: number }[];
    assert.equal(models.find((m) => m.name === model)?.ready, 2);
    const nodes = JSON.parse((await p.ctl(["nodes", "--json"])).stdout) as { id: string; replicas: number }[];
    assert.equal(nodes.length, 1);
    assert.equal(nodes[0]!.replicas, 2);
    assert.equal(p.enginePids(model).length, 2);
  });

  it("answers a chat completion, not streamed, with usage", async () => {
    const client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key });
    const r = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Say hello" }], max_tokens: 8, seed: 7 });
    assert.equal(r.object, "chat.completion");
    assert.ok(r.choices[0]!.message.content!.length > 0);
    assert.equal(r.usage!.completion_tokens, 8);
    const again = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Say hello" }], max_tokens: 8, seed: 7 });
    assert.equal(again.choices[0]!.message.content, r.choices[0]!.message.content, "same seed, same answer, whichever replica");
  });

  it("streams a chat completion, with and without the usage chunk", async () => {
    const client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key });
    let text = "";
    let chunks = 0;
    let usageChunks = 0;
    for await (const chunk of await client.chat.completions.create({ model, messages: [{ role: "user", content: "Stream" }], max_tokens: 6, stream: true })) {
      chunks++;
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usageChunks++;
    }
    assert.ok(chunks >= 6 && text.length > 0);
    assert.equal(usageChunks, 0, "no usage chunk unless the client asked");
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of await client.chat.completions.create({
      model,
      messages: [{ role: "user", content: "Stream" }],
      max_tokens: 6,
      stream: true,
      stream_options: { include_usage: true },
    })) {
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(usage?.completion_tokens, 6);
  });

  it("serves a chat completion whose URL carries a query string (the hot path takes it, streamed or not)", async () => {
    // Clients behind proxies add query strings (Azure-style api-version, tracing): the same answer.
    const client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, defaultQuery: { "api-version": "2024-06-01" } });
    const r = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Say hello" }], max_tokens: 8, seed: 7 }).withResponse();
    assert.match(r.response.url, /\/v1\/chat\/completions\?api-version=2024-06-01$/);
    assert.equal(r.data.object, "chat.completion");
    assert.equal(r.data.usage!.completion_tokens, 8);
    const plain = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key });
    const same = await plain.chat.completions.create({ model, messages: [{ role: "user", content: "Say hello" }], max_tokens: 8, seed: 7 });
    assert.equal(r.data.choices[0]!.message.content, same.choices[0]!.message.content, "as without the query string");
    let text = "";
    let finish: string | null | undefined;
    for await (const chunk of await client.chat.completions.create({ model, messages: [{ role: "user", content: "Stream" }], max_tokens: 4, stream: true })) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.ok(text.length > 0);
    assert.equal(finish, "length");
  });

  it("spreads concurrent requests over both replicas", async () => {
    // Requests one at a time would all go to whichever replica answers sooner (the chat profile's
    // rule); requests at once find one replica busy and go to the other.
    const client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key });
    const seen = new Map<string, number>();
    for (let round = 0; round < 4; round++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => client.chat.completions.create({ model, messages: [{ role: "user", content: `q${round}-${i}` }], max_tokens: 2 }).withResponse()),
      );
      for (const { response } of answers) {
        const replica = response.headers.get("x-llmgw-replica")!;
        seen.set(replica, (seen.get(replica) ?? 0) + 1);
      }
    }
    assert.equal(seen.size, 2, `both replicas answered: ${JSON.stringify([...seen])}`);
    for (const n of seen.values()) assert.ok(n >= 5, `each replica took a share: ${JSON.stringify([...seen])}`);
  });

  it("lists served models on /v1/models", async () => {
    const client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key });
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    assert.ok(ids.includes(model));
  });

  it("records one usage event per request in the ledger", async () => {
    const client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key });
    const marker = `ledger-${Date.now()}`;
    for (let i = 0; i < 3; i++) await client.chat.completions.create({ model, messages: [{ role: "user", content: marker }], max_tokens: 3 });
    const { prisma } = await import("../../common/db.ts");
    const db = prisma(p.env.DATABASE_URL);
    const deadline = Date.now() + 15_000;
    let n = 0;
    while (Date.now() < deadline) {
      n = await db.usageEvent.count({ where: { model, completionTokens: 3 } });
      if (n >= 3) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await db.$disconnect();
    assert.equal(n, 3);
  });

  it("refuses a request without a key, with a wrong key, or for a model not served — in OpenAI's error shape", async () => {
    const noKey = await fetch(`${p.clientUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "x" }] }),
    });
    assert.equal(noKey.status, 401);
    const body = (await noKey.json()) as { error: { message: string; type: string; code: string } };
    assert.equal(body.error.type, "authentication_error");
    assert.match(body.error.message, /API key/);

    const wrong = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: "sk-llmgw-wrong" });
    await assert.rejects(wrong.chat.completions.create({ model, messages: [{ role: "user", content: "x" }] }), OpenAI.AuthenticationError);

    const client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key });
    await assert.rejects(
      client.chat.completions.create({ model: "no-such-model", messages: [{ role: "user", content: "x" }] }),
      (err: unknown) => err instanceof OpenAI.NotFoundError && (err.error as { code?: string }).code === "model_not_found",
    );
    await assert.rejects(
      client.chat.completions.create({ model, messages: [] }),
      (err: unknown) => err instanceof OpenAI.BadRequestError && (err.error as { param?: string }).param === "messages",
    );
    const badJson = await fetch(`${p.clientUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: "{not json",
    });
    assert.equal(badJson.status, 400);
    assert.equal(((await badJson.json()) as { error: { code: string } }).error.code, "invalid_json");
  });
});
