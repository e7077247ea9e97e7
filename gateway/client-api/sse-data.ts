// The `data:` payloads of an engine's SSE stream, as its bytes arrive in pieces: what the
// Anthropic and Responses translations both read before each turns a chunk into its own events.

export class SseData {
  private buf = "";

  /** Raw SSE text; returns the non-empty payloads of the events it completes, `[DONE]` included. */
  push(text: string): string[] {
    this.buf += text;
    const out: string[] = [];
    let at: number;
    while ((at = this.buf.indexOf("\n\n")) >= 0) {
      const event = this.buf.slice(0, at);
      this.buf = this.buf.slice(at + 2);
      for (const line of event.split("\n")) {
        if (!line.startsWith("data:")) continue;
        const data = line.slice(5).trim();
        if (data) out.push(data);
      }
    }
    return out;
  }
}
