// A hook for a stage after the proxy that rewrites the engine's answer before any responder reads
// it (the guard's restore and output rules, gateway/guard/answer.ts). The router only knows this
// interface, so it never imports a stage above it; one rewrite serves the relay and the Anthropic
// responder alike.
import type { UpstreamCall } from "./upstream-call.ts";

export interface AnswerStream {
  push(text: string): string;
  end(): string;
  /** The rewrite ended the answer itself (a guardrail block): the engine is stopped, the stream ends as sent. */
  readonly stopped?: boolean;
}

export interface AnswerRewrite {
  /** A whole answer (JSON); may throw an ApiError, which the client gets instead of the answer. */
  whole(text: string): string;
  /** A stream's rewriter: given the engine's text as it comes, answers what to send on now. */
  stream(): AnswerStream;
}

/** Thrown into the engine's call to stop it when the rewrite has ended the answer. */
const STOPPED = new Error("the answer was ended by the gateway");

/** Makes `up` hand its responder the rewritten answer (a 200 only: errors pass as they are). */
export function rewriteAnswer(up: UpstreamCall, rw: AnswerRewrite): void {
  if (up.statusCode !== 200) return;
  const text = up.text.bind(up);
  const stream = up.stream.bind(up);
  up.text = async () => rw.whole(await text());
  up.stream = (onText, out) => {
    const s = rw.stream();
    return stream((t) => {
      const o = s.push(t);
      if (o) onText(o);
      if (s.stopped) throw STOPPED;
    }, out).then(
      () => {
        const rest = s.end();
        if (rest) onText(rest);
      },
      (err: unknown) => {
        if (err !== STOPPED) throw err;
      },
    );
  };
}
