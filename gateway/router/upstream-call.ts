// One request to a replica or an outside provider, over undici's dispatch API: the answer's status
// and headers first, then its body gathered whole or handed on chunk by chunk, paused while the
// client is slow to read. pool.request() would wrap each answer in a body stream, an async resource
// and an AbortSignal: 5–11 % more CPU in a plain forwarder (docs/benchmarks-history.md, stop 15).
import type { IncomingHttpHeaders } from "node:http";
import type { Writable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import type { Dispatcher } from "undici";

type Settle = { resolve: () => void; reject: (err: Error) => void };

/** How much of a failed attempt's answer is read and dropped to keep its connection; past it the connection goes. */
export const DUMP_LIMIT_BYTES = 128 * 1024;

export class UpstreamCall implements Dispatcher.DispatchHandler {
  statusCode = 0;
  headers: IncomingHttpHeaders = {};
  /** Settles when the status and headers are in (statusCode is set), or rejects when the request failed before them. */
  readonly head: Promise<void>;
  private headSettle!: Settle;
  private controller: Dispatcher.DispatchController | null = null;
  private abortReason: Error | null = null;
  private chunks: Buffer[] = [];
  private onChunk: ((chunk: Buffer) => void) | null = null;
  private out: Writable | null = null;
  private ended = false;
  private failure: Error | null = null;
  private bodySettle: Settle | null = null;

  constructor(dispatcher: Dispatcher, opts: Dispatcher.DispatchOptions) {
    this.head = new Promise<void>((resolve, reject) => (this.headSettle = { resolve, reject }));
    dispatcher.dispatch(opts, this);
  }

  /** Stops the request (the client left); whoever waits on it is rejected with `reason`. */
  abort(reason: Error): void {
    this.abortReason ??= reason;
    this.controller?.abort(reason);
  }

  /** The whole body as text. */
  async text(): Promise<string> {
    await this.body(null, null);
    const b = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    return b.toString("utf8");
  }

  /**
   * Reads the body to its end and drops it (a failed attempt's answer), so the connection is kept;
   * one longer than DUMP_LIMIT_BYTES (or endless) is cut off with its connection instead of holding up the retry.
   */
  dump(): Promise<void> {
    let left = DUMP_LIMIT_BYTES;
    return this.body((chunk) => {
      left -= chunk.length;
      if (left < 0) throw new Error("a failed answer too long to read to its end");
    }, null).catch(() => undefined);
  }

  /**
   * Hands the body on as text as it comes (a character split between two chunks is kept whole),
   * pausing the engine while `out` has too much to write. A throw from `onText` ends the call with it.
   */
  stream(onText: (text: string) => void, out: Writable): Promise<void> {
    const decoder = new StringDecoder("utf8");
    return this.body((chunk) => {
      const text = decoder.write(chunk);
      if (text) onText(text);
    }, out).then(() => {
      const rest = decoder.end();
      if (rest) onText(rest);
    });
  }

  /**
   * Hands the body on as bytes as they come (an audio answer), pausing the engine while `out` has
   * too much to write. Not a text: the guard's rewrite (answer-rewrite.ts) has nothing to read here.
   */
  bytes(onChunk: (chunk: Buffer) => void, out: Writable): Promise<void> {
    return this.body(onChunk, out);
  }

  private body(onChunk: ((chunk: Buffer) => void) | null, out: Writable | null): Promise<void> {
    if (onChunk) {
      const held = this.chunks;
      this.chunks = [];
      this.onChunk = onChunk;
      this.out = out;
      try {
        for (const c of held) onChunk(c);
      } catch (err) {
        this.fail(err as Error);
      }
      this.pauseIfFull();
    }
    if (this.failure) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve();
    return new Promise<void>((resolve, reject) => (this.bodySettle = { resolve, reject }));
  }

  /** `onChunk` threw: the call ends with that error (also when the answer was already complete). */
  private fail(err: Error): void {
    this.failure = err;
    this.abort(err);
  }

  private pauseIfFull(): void {
    const out = this.out;
    if (!out?.writableNeedDrain || !this.controller || this.controller.paused) return;
    this.controller.pause();
    out.once("drain", () => this.controller?.resume());
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abortReason) controller.abort(this.abortReason);
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.statusCode = statusCode;
    this.headers = headers;
    this.headSettle.resolve();
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.onChunk) {
      try {
        this.onChunk(chunk);
      } catch (err) {
        return this.fail(err as Error);
      }
      this.pauseIfFull();
    } else this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.ended = true;
    this.bodySettle?.resolve();
  }

  onResponseError(_c: Dispatcher.DispatchController | undefined, err: Error): void {
    const reason = this.abortReason ?? err;
    if (this.statusCode === 0) return this.headSettle.reject(reason);
    this.failure = reason;
    this.bodySettle?.reject(reason);
  }
}
