// POST /v1/rerank end to end: a sim model (its deterministic reranker: the share of the query's
// words a document has) behind the real gateway. Ranked best first, cut to top_n, one usage row
// per request under /v1/rerank; the key's model allowlist; malformed bodies in OpenAI's error shape.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

interface RerankAnswer {
  id: string;
  model: string;
  usage: { total_tokens: number };
  results: { index: number; relevance_score: number; document?: { text: string } }[];
}

describe("POST /v1/rerank", () => {
  let p: Platform;
  let key: string;
  const model = uniqueModel("e2e-rerank");
  const rerank = async (body: unknown, apiKey = key, raw?: string) => {
    const r = await fetch(`${p.clientUrl}/v1/rerank`, { method: "POST", headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, body: raw ?? JSON.stringify(body) });
    return { status: r.status, body: (await r.json()) as RerankAnswer & { error?: { message: string; type: string; param: string | null; code: string | null } } };
  };

  before(async () => {
    p = await startPlatform();
    await p.serve(model);
    ({ key } = await p.newKey());
  });
  after(async () => {
    await p?.stop();
  });

  it("ranks the documents against the query, best first, cut to top_n, and records usage", async () => {
    const documents = ["The capital of France is Paris.", "Bananas are yellow.", "Paris is in France, its capital city.", "Nothing here."];
    const r = await rerank({ model, query: "capital of France", documents, top_n: 3 });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.model, model);
    assert.equal(r.body.results.length, 3);
    assert.deepEqual(r.body.results.map((x) => x.index).slice(0, 2).sort(), [0, 2]);
    for (let i = 1; i < r.body.results.length; i++) assert.ok(r.body.results[i - 1]!.relevance_score >= r.body.results[i]!.relevance_score);
    assert.equal(r.body.results[0]!.document!.text, documents[r.body.results[0]!.index]);
    assert.ok(r.body.usage.total_tokens > 0);
    const objects = await rerank({ model, query: "capital of France", documents: documents.map((text) => ({ text })) });
    assert.deepEqual(objects.body.results.map((x) => x.index), [...r.body.results.map((x) => x.index), 1]);
    const { prisma } = await import("../../common/db.ts");
    const db = prisma(p.env.DATABASE_URL);
    let rows: { promptTokens: number }[] = [];
    for (const deadline = Date.now() + 15_000; Date.now() < deadline && rows.length < 2; await new Promise((res) => setTimeout(res, 200))) {
      rows = await db.usageEvent.findMany({ where: { model, endpoint: "/v1/rerank" } });
    }
    await db.$disconnect();
    assert.equal(rows.length, 2);
    assert.equal(rows[0]!.promptTokens, r.body.usage.total_tokens);
  });

  it("refuses malformed bodies in OpenAI's error shape, and models the key may not use", async () => {
    const cases: [unknown, string | null][] = [
      [{ model, documents: ["a"] }, "query"],
      [{ model, query: "q" }, "documents"],
      [{ model, query: "q", documents: [] }, "documents"],
      [{ model, query: "q", documents: [1, 2] }, "documents.0"],
      [{ model, query: "q", documents: ["a"], top_n: -1 }, "top_n"],
      [{ model, query: 7, documents: ["a"] }, "query"],
      [{ query: "q", documents: ["a"] }, "model"],
      [[1, 2], null],
    ];
    for (const [body, param] of cases) {
      const r = await rerank(body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error!.type, "invalid_request_error");
      assert.equal(r.body.error!.param, param, JSON.stringify(body));
    }
    const broken = await rerank(null, key, "{not json");
    assert.equal(broken.status, 400);
    assert.equal(broken.body.error!.code, "invalid_json");
    const unknown = await rerank({ model: "no-such-model", query: "q", documents: ["a"] });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error!.code, "model_not_found");
    const other = await p.newKey({ args: ["--model", "nothing-*"] });
    const refused = await rerank({ model, query: "q", documents: ["a"] }, other.key);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error!.code, "model_not_allowed");
  });
});
