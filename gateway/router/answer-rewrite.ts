// A hook for a stage after the proxy that rewrites the engine's answer before any responder reads
// it (the guard's restore and output rules, gateway/guard/answer.ts). The router only knows this
// interface, so it never imports a stage above it; one rewrite serves the relay and the Anthropic
// responder alike. A rewrite may answer later (a judge model asked about the text): its pieces are
// then sent on in order, and the engine's call ends only once they all are.
import type { Endpoint } from "./endpoint.ts";
import type { Usage } from "./sse-usage.ts";
import type { UpstreamCall } from "./upstream-call.ts";

export interface AnswerStream {
  push(text: string): string | Promise<string>;
  end(): string | Promise<string>;
  /** The rewrite ended the answer itself (a guardrail block): the engine is stopped, the stream ends as sent. */
  readonly stopped?: boolean;
}

export interface AnswerRewrite {
  /** A whole answer (JSON); may throw an ApiError, which the client gets instead of the answer. */
  whole(text: string): string | Promise<string>;
  /** A stream's rewriter: given the engine's text as it comes, answers what to send on now. */
  stream(): AnswerStream;
  /**
   * The rewrite may end a stream: our own engines are asked for the usage in every chunk
   * (stream_options.continuous_usage_stats), so an answer ended early is billed for what was made.
   */
  readonly mayStop?: boolean;
}

/** A rewrite that answers at once (restore, pattern rules): what the asynchronous stages wrap. */
export interface SyncAnswerRewrite extends AnswerRewrite {
  whole(text: string): string;
  stream(): SyncAnswerStream;
}

export interface SyncAnswerStream extends AnswerStream {
  push(text: string): string;
  end(): string;
  /** The engine's usage as last seen in the stream, when the rewrite reads it. */
  readonly usage?: Usage | null;
}

/**
 * A whole answer the rewrite refused (keyed by the error the client gets instead), for the ledger:
 * the engine made it all the same. The proxy adds the replica; client-api/forward.ts records it.
 */
export const refusedAnswers = new WeakMap<object, { usage: Usage; endpoint: Endpoint | null; ttftMs: number | null; gpuSeconds?: number }>();

/** Thrown into the engine's call to stop it when the rewrite has ended the answer. */
const STOPPED = new Error("the answer was ended by the gateway");

function usageOf(text: string): Usage | null {
  try {
    return (JSON.parse(text) as { usage?: Usage | null }).usage ?? null;
  } catch {
    return null;
  }
}

/** Makes `up` hand its responder the rewritten answer (a 200 only: errors pass as they are). */
export function rewriteAnswer(up: UpstreamCall, rw: AnswerRewrite): void {
  if (up.statusCode !== 200) return;
  const text = up.text.bind(up);
  const stream = up.stream.bind(up);
  up.text = async () => {
    const t = await text();
    try {
      return await rw.whole(t);
    } catch (err) {
      const usage = usageOf(t);
      if (usage && err !== null && typeof err === "object") refusedAnswers.set(err, { usage, endpoint: null, ttftMs: null });
      throw err;
    }
  };
  up.stream = (onText, out) => {
    const s = rw.stream();
    // Pieces a rewrite answers later are sent in order: once one is pending, every later one waits behind it.
    let pending: Promise<void> | null = null;
    const send = (o: string) => {
      if (o) onText(o);
      if (s.stopped) up.abort(STOPPED);
    };
    // A piece that fails stops the engine's call with its error (handled here, so never an unhandled rejection).
    const chain = (next: Promise<void>) => {
      pending = next;
      next.catch((err: unknown) => up.abort(err instanceof Error ? err : new Error(String(err))));
    };
    return stream((t) => {
      if (pending) return chain(pending.then(() => s.push(t)).then(send));
      const o = s.push(t);
      if (typeof o !== "string") return chain(o.then(send));
      if (o) onText(o);
      if (s.stopped) throw STOPPED;
    }, out).then(
      async () => {
        await pending;
        const rest = await s.end();
        if (rest) onText(rest);
      },
      async (err: unknown) => {
        if (err !== STOPPED) {
          await pending?.catch(() => undefined);
          throw err;
        }
        await pending;
      },
    );
  };
}
