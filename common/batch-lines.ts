// A batch's input file (OpenAI's Batch API): JSONL, one request a line, each
// `{custom_id, method: "POST", url, body}`. Read line by line (never whole in memory) at upload,
// where the first bad line is named by its number, and again by the batch's run.
import fs from "node:fs";
import readline from "node:readline";

/** The endpoints a batch may call, as OpenAI's Batch API lists them. */
export const BATCH_ENDPOINTS = ["/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/responses"] as const;
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];

/** OpenAI's limits: 50,000 requests a batch; a custom_id is the client's own short label. */
export const MAX_BATCH_LINES = 50_000;
export const MAX_CUSTOM_ID = 512;

export interface BatchLine {
  /** 1-based line number in the file. */
  line: number;
  customId: string;
  url: BatchEndpoint;
  body: Record<string, unknown>;
}

/** A bad line: where, what, and which field. */
export class BatchLineError extends Error {
  constructor(
    readonly line: number,
    message: string,
    readonly param: string,
  ) {
    super(`line ${line}: ${message}`);
  }
}

/** One line checked; throws BatchLineError naming it. `seen` catches a custom_id used twice. */
export function parseBatchLine(text: string, line: number, seen: Set<string>): BatchLine {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new BatchLineError(line, "is not valid JSON", "file");
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) throw new BatchLineError(line, "must be a JSON object {custom_id, method, url, body}", "file");
  const o = v as Record<string, unknown>;
  const customId = o.custom_id;
  if (typeof customId !== "string" || !customId) throw new BatchLineError(line, "custom_id: a non-empty string is required", "custom_id");
  if (customId.length > MAX_CUSTOM_ID) throw new BatchLineError(line, `custom_id: at most ${MAX_CUSTOM_ID} characters`, "custom_id");
  if (seen.has(customId)) throw new BatchLineError(line, `custom_id '${customId}' is used by an earlier line; each must be unique`, "custom_id");
  if (o.method !== "POST") throw new BatchLineError(line, "method: must be \"POST\"", "method");
  if (typeof o.url !== "string" || !(BATCH_ENDPOINTS as readonly string[]).includes(o.url)) {
    throw new BatchLineError(line, `url: must be one of ${BATCH_ENDPOINTS.join(", ")}`, "url");
  }
  const body = o.body;
  if (!body || typeof body !== "object" || Array.isArray(body)) throw new BatchLineError(line, "body: a JSON object (the request) is required", "body");
  const model = (body as Record<string, unknown>).model;
  if (typeof model !== "string" || !model) throw new BatchLineError(line, "body.model: required", "body.model");
  if ((body as Record<string, unknown>).stream === true) throw new BatchLineError(line, "body.stream: a batch's requests cannot stream", "body.stream");
  seen.add(customId);
  return { line, customId, url: o.url as BatchEndpoint, body: body as Record<string, unknown> };
}

/** Every non-blank line of the file, checked, in order. */
export async function* readBatchLines(file: string): AsyncGenerator<BatchLine> {
  const rl = readline.createInterface({ input: fs.createReadStream(file, { encoding: "utf8" }), crlfDelay: Infinity });
  const seen = new Set<string>();
  let n = 0;
  let count = 0;
  try {
    for await (const text of rl) {
      n++;
      if (!text.trim()) continue;
      if (++count > MAX_BATCH_LINES) throw new BatchLineError(n, `a batch may hold at most ${MAX_BATCH_LINES} requests`, "file");
      yield parseBatchLine(text, n, seen);
    }
  } finally {
    rl.close();
  }
}

/** Checks a whole file: its count of requests and the endpoints they use, or the first bad line. */
export async function checkBatchFile(file: string): Promise<{ count: number; urls: Set<string> }> {
  const urls = new Set<string>();
  let count = 0;
  for await (const l of readBatchLines(file)) {
    count++;
    urls.add(l.url);
  }
  if (count === 0) throw new BatchLineError(1, "the file holds no request", "file");
  return { count, urls };
}
