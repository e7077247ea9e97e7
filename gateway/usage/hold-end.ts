// Holds back a response's end (its last bytes) until released, so something can be made durable
// first (the usage journal) whichever responder wrote the answer: relay, Anthropic or Responses.
import type { ServerResponse } from "node:http";

export interface HeldEnd {
  /** Ends the response as its responder asked, if it did; idempotent. */
  release(): void;
  /** The body the responder ended with, when it gave it whole to end() (a JSON answer); else null. */
  body(): string | null;
}

export function holdEnd(res: ServerResponse): HeldEnd {
  const end = res.end;
  let asked: unknown[] | null = null;
  res.end = function heldEnd(this: ServerResponse, ...args: unknown[]) {
    asked ??= args;
    return this;
  } as ServerResponse["end"];
  return {
    release() {
      if (res.end === end) return;
      res.end = end;
      if (asked) (end as (...a: unknown[]) => ServerResponse).apply(res, asked);
    },
    body() {
      const b = asked?.[0];
      return typeof b === "string" ? b : Buffer.isBuffer(b) ? b.toString("utf8") : null;
    },
  };
}
