// A hook for a stage after the proxy that rewrites the engine's answer before any responder reads
// it (the guard's restore, gateway/guard/restore.ts). The router only knows this interface, so
// it never imports a stage above it; one rewrite serves the relay and the Anthropic responder alike.
import type { UpstreamCall } from "./upstream-call.ts";

export interface AnswerRewrite {
  /** A whole answer (JSON). */
  whole(text: string): string;
  /** A stream's rewriter: given the engine's text as it comes, answers what to send on now. */
  stream(): { push(text: string): string; end(): string };
}

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
    }, out).then(() => {
      const rest = s.end();
      if (rest) onText(rest);
    });
  };
}
