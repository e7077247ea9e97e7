// What makes two requests the same question (docs/cache.md). Exact: the whole request normalized
// (keys sorted; the fields that do not change the answer left out) and hashed. Similar: everything
// but the last user turn hashed as the prefix key, which must match exactly, and that turn's text,
// which is embedded. The project id is part of every key, so no project ever sees another's answers.
import { createHash } from "node:crypto";

/** Fields that do not change the answer: who asked, what to keep, and how the stream is framed. */
const IGNORED = new Set(["user", "metadata", "store", "service_tier", "stream", "stream_options", "safety_identifier", "prompt_cache_key"]);

export interface RequestKeys {
  /** The exact key: project, route and the normalized request. */
  exact: string;
  /** The similar cache's prefix key, and the last user turn's text; null when the last turn is no plain user text. */
  prefix: string | null;
  lastUser: string | null;
}

/** JSON with every object's keys sorted, so key order never makes two requests differ. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

const sha = (s: string): string => createHash("sha256").update(s).digest("hex");

/** A message's text when it is only text (a string, or text parts); null otherwise (pictures, tool calls). */
function plainText(m: unknown): string | null {
  if (m === null || typeof m !== "object") return null;
  const { role, content } = m as { role?: unknown; content?: unknown };
  if (role !== "user") return null;
  if (typeof content === "string") return content;
  if (!Array.isArray(content) || content.length === 0) return null;
  const parts: string[] = [];
  for (const p of content as { type?: unknown; text?: unknown }[]) {
    if (p?.type !== "text" || typeof p.text !== "string") return null;
    parts.push(p.text);
  }
  return parts.join("\n");
}

export function requestKeys(projectId: string, route: string, body: Record<string, unknown>, embeddingModel: string | null): RequestKeys {
  const norm: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) if (!IGNORED.has(k)) norm[k] = v;
  // A stream is replayed as a stream and a whole answer as one: they are kept apart, as is a stream's usage chunk.
  const stream = body.stream === true;
  norm.stream = stream;
  norm.include_usage = stream && (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
  const exact = sha(`${projectId}\0${route}\0${canonicalJson(norm)}`);
  const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : null;
  const lastUser = messages && messages.length > 0 ? plainText(messages[messages.length - 1]) : null;
  if (lastUser === null || embeddingModel === null) return { exact, prefix: null, lastUser: null };
  const prefix = sha(`${projectId}\0${route}\0${embeddingModel}\0${canonicalJson({ ...norm, messages: messages!.slice(0, -1) })}`);
  return { exact, prefix, lastUser };
}

/** Routes whose answer is fixed by the request: nothing is sampled. */
const UNSAMPLED = new Set(["/v1/embeddings", "/v1/rerank"]);

/** Whether the request may be answered from the cache: a sampled answer (temperature > 0, or the model's default) only where the project allows it. */
export function cacheableSampling(route: string, body: Record<string, unknown>, allowTemperature: boolean): boolean {
  return UNSAMPLED.has(route) || allowTemperature || body.temperature === 0;
}
