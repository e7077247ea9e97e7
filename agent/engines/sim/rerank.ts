// The sim as a reranker, on vLLM's POST /rerank (and /v1/rerank, /v2/rerank): the Jina/Cohere
// shape, {query, documents, top_n} answered with results {index, document, relevance_score},
// best first. The score is deterministic: the share of the query's words a document has, scaled
// into (0, 1) so a document with none still ranks (by its length, shorter first), ties by index.
import { BadRequest, asInt } from "./request.ts";

const words = (s: string): Set<string> => new Set(s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
const tokens = (s: string): number => Math.max(1, Math.ceil(s.length / 4));

export function relevance(query: string, doc: string): number {
  const q = words(query);
  const d = words(doc);
  let shared = 0;
  for (const w of q) if (d.has(w)) shared++;
  const overlap = q.size === 0 ? 0 : shared / q.size;
  return Number((0.01 + 0.98 * overlap + 0.01 / (1 + doc.length)).toFixed(6));
}

export function rerank(body: Record<string, unknown>, model: string, id: string): string {
  if (typeof body.query !== "string") throw new BadRequest("query must be a string", "query");
  const docs = body.documents;
  if (!Array.isArray(docs) || docs.length === 0) throw new BadRequest("documents must be a non-empty array", "documents");
  const texts = docs.map((d: unknown, i) => {
    if (typeof d === "string") return d;
    const t = (d as { text?: unknown } | null)?.text;
    if (typeof t === "string") return t;
    throw new BadRequest(`documents[${i}] must be a string or an object with text`, `documents[${i}]`);
  });
  const topN = asInt(body.top_n, "top_n", 0, 1_000_000) || texts.length;
  const query = body.query;
  const results = texts
    .map((text, index) => ({ index, document: { text }, relevance_score: relevance(query, text) }))
    .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
    .slice(0, topN);
  const total = texts.reduce((n, t) => n + tokens(query) + tokens(t), 0);
  return JSON.stringify({ id, model, usage: { total_tokens: total }, results });
}
