// Reads the usage out of an engine's SSE stream as it passes through. The gateway always asks the
// engine for a usage chunk (the ledger needs it); when the client did not ask for one, that chunk
// is taken out so the client sees exactly what it asked for.

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  /** Alone in a rerank's usage (vLLM's). */
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

export class SseUsageScanner {
  usage: Usage | null = null;
  private buf = "";
  private done = "";

  constructor(private readonly forwardUsageChunk: boolean) {}

  /** Takes raw bytes from the engine; returns what to send on (whole events only). */
  push(chunk: string): string {
    this.buf += chunk;
    let out = "";
    let idx: number;
    while ((idx = this.buf.indexOf("\n\n")) >= 0) {
      const event = this.buf.slice(0, idx + 2);
      this.buf = this.buf.slice(idx + 2);
      out += this.inspect(event);
    }
    return out;
  }

  /** Whatever is left when the engine closes the stream, the held-back `[DONE]` included. */
  end(): string {
    const rest = this.done + this.buf;
    this.buf = "";
    this.done = "";
    return rest;
  }

  private inspect(event: string): string {
    // Held back to the response's end, which waits for the usage journal (gateway/usage/hold-end.ts):
    // a client that has read [DONE] has its usage on record.
    if (event.startsWith("data: [DONE]")) {
      this.done += event;
      return "";
    }
    if (!event.includes('"usage"') || !event.startsWith("data: {")) return event;
    let parsed: { usage?: Usage | null; choices?: unknown[] };
    try {
      parsed = JSON.parse(event.slice(6));
    } catch {
      return event;
    }
    if (parsed.usage) this.usage = parsed.usage;
    const usageOnly = Array.isArray(parsed.choices) && parsed.choices.length === 0;
    return usageOnly && !this.forwardUsageChunk ? "" : event;
  }
}
