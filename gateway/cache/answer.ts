// An answer as the client got it, kept to be served again: its content type and the bytes written,
// chunk by chunk for a stream (each SSE chunk as it went out), so a streamed answer is replayed as
// a stream. Taken from the response itself, so it is the same for every API shape (OpenAI's and
// Anthropic's) and after the guard's output rules.
import type { ServerResponse } from "node:http";

export interface CachedAnswer {
  contentType: string;
  stream: boolean;
  chunks: string[];
}

/** Answers bigger than this are not kept (a cache entry is one Redis value or one row). */
const MAX_BYTES = 1024 * 1024;

type Write = (chunk: unknown, ...rest: unknown[]) => boolean;
type End = (...args: unknown[]) => ServerResponse;
type WriteHead = (status: number, ...rest: unknown[]) => ServerResponse;

/** Records what is written to one response, as it is written; the response behaves as before. */
export class AnswerCapture {
  private chunks: string[] = [];
  private bytes = 0;
  private contentType = "";
  // Asked to end, not res.writableEnded: the end itself waits for the usage journal (usage/hold-end.ts).
  private ended = false;

  constructor(private readonly res: ServerResponse) {
    const r = res as unknown as { writeHead: WriteHead; write: Write; end: End };
    const [writeHead, write, end] = [r.writeHead, r.write, r.end];
    r.writeHead = (status, ...rest) => {
      for (const h of rest) if (h !== null && typeof h === "object" && !Array.isArray(h)) this.contentType = String((h as Record<string, unknown>)["content-type"] ?? this.contentType);
      return writeHead.call(res, status, ...rest);
    };
    r.write = (chunk, ...rest) => {
      this.keep(chunk);
      return write.call(res, chunk, ...rest);
    };
    r.end = (...args) => {
      this.ended = true;
      if (args.length > 0 && typeof args[0] !== "function") this.keep(args[0]);
      return end.apply(res, args);
    };
  }

  private keep(chunk: unknown): void {
    if (this.bytes > MAX_BYTES || chunk === undefined || chunk === null) return;
    const text = typeof chunk === "string" ? chunk : Buffer.isBuffer(chunk) ? chunk.toString("utf8") : chunk instanceof Uint8Array ? Buffer.from(chunk).toString("utf8") : "";
    if (text === "") return;
    this.bytes += Buffer.byteLength(text);
    this.chunks.push(text);
  }

  /** The answer to keep: a whole 200 of a size worth keeping, else null. */
  answer(): CachedAnswer | null {
    if (this.res.statusCode !== 200 || !this.ended || this.bytes > MAX_BYTES || this.chunks.length === 0) return null;
    const contentType = this.contentType || String(this.res.getHeader("content-type") ?? "application/json");
    return { contentType, stream: contentType.startsWith("text/event-stream"), chunks: this.chunks };
  }
}

/** Writes a kept answer: a stream chunk by chunk, as it first went out. */
export function replay(res: ServerResponse, a: CachedAnswer, outcome: "hit" | "similar", requestId: string): void {
  const headers: Record<string, string | number> = { "content-type": a.contentType, "x-llmgw-cache": outcome, "x-request-id": requestId };
  if (a.stream) {
    res.writeHead(200, { ...headers, "cache-control": "no-cache", connection: "keep-alive" });
    for (const c of a.chunks) res.write(c);
    res.end();
    return;
  }
  const body = a.chunks.join("");
  res.writeHead(200, { ...headers, "content-length": Buffer.byteLength(body) });
  res.end(body);
}
