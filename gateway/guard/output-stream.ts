// The output stage on a stream. Text is held until a sentence ends (`stream: sentence`) or until the
// answer ends (`buffer_all`), checked by the output rules, then released; tool-call arguments are
// held whole until their choice finishes, so they are checked as JSON. A block ends the stream at
// once: a last chunk with finish_reason `content_filter` naming the rule (never the text) and
// [DONE]; `stopped` tells the caller to stop the engine.
import type { Usage } from "../router/sse-usage.ts";
import { GuardBlock, type GuardDecision, type TextCheck } from "./check.ts";

type Delta = { content?: unknown; reasoning_content?: unknown; reasoning?: unknown; tool_calls?: { index?: number; function?: { arguments?: unknown } }[] };
type Choice = { index?: number; finish_reason?: string | null; text?: unknown; delta?: Delta };
export type Chunk = { id?: string; object?: string; created?: number; model?: string; choices?: Choice[]; usage?: Usage | null };

/**
 * A stream's last chunk when a rule ends it: finish_reason content_filter on each choice, the rule
 * named (never the text), the engine's usage so far (so the ledger bills what was made), then [DONE].
 * `failed`: the rule's judge or service did not answer and the policy fails closed.
 */
export function blockedEnding(c: Chunk, d: Omit<GuardDecision, "action">, usage: Usage | null, failed = false): string {
  const completion = c.object === "text_completion";
  const choices = (c.choices ?? [{ index: 0 }]).map((x) => ({ index: x.index ?? 0, ...(completion ? { text: "" } : { delta: {} }), finish_reason: "content_filter" }));
  const { policy, rule, direction } = d;
  const last = { id: c.id, object: c.object, created: c.created, model: c.model, choices, guardrail: { policy, rule, direction, ...(failed && { failed: true }) }, ...(usage && { usage }) };
  return `data: ${JSON.stringify(last)}\n\ndata: [DONE]\n\n`;
}

/** Held text past this without a sentence's end is released at its last space, so memory and delay stay bounded. */
const MAX_HELD = 2000;
const ENDS = new Set([".", "!", "?", "。", "！", "？", ";"]);

/** Where the text may be cut: just past the last sentence end (its punctuation and the space after it, or a newline); 0 when none. */
export function sentenceCut(s: string): number {
  for (let i = s.length - 1; i >= 0; i--) {
    const ch = s[i]!;
    if (ch === "\n") return i + 1;
    if ((ch === " " || ch === "\t") && i > 0 && ENDS.has(s[i - 1]!)) return i + 1;
  }
  if (s.length > MAX_HELD) {
    const sp = s.lastIndexOf(" ");
    return sp > 0 ? sp + 1 : s.length;
  }
  return 0;
}

export class OutputStream {
  stopped = false;
  /** The engine's usage as last seen (every chunk carries it when the proxy asked for continuous usage). */
  usage: Usage | null = null;
  private buf = "";
  private held = new Map<string, string>();

  constructor(
    private readonly check: TextCheck,
    private readonly wholeOnly: boolean,
    /** Told each new block or flag as it happens (the records). */
    private readonly onDecisions: (c: TextCheck) => void,
  ) {}

  push(chunk: string): string {
    if (this.stopped) return "";
    this.buf += chunk;
    let out = "";
    let idx: number;
    while (!this.stopped && (idx = this.buf.indexOf("\n\n")) >= 0) {
      const ev = this.buf.slice(0, idx + 2);
      this.buf = this.buf.slice(idx + 2);
      out += this.event(ev);
    }
    return out;
  }

  end(): string {
    const rest = this.stopped ? "" : this.buf;
    this.buf = "";
    return rest;
  }

  /** What may be released of `key`'s held text plus `s` now (all of it when `last`). */
  private release(key: string, s: string, last: boolean, json = false): string {
    const t = (this.held.get(key) ?? "") + s;
    const cut = last ? t.length : json || this.wholeOnly ? 0 : sentenceCut(t);
    if (cut < t.length) this.held.set(key, t.slice(cut));
    else this.held.delete(key);
    const ready = t.slice(0, cut);
    if (!ready) return ready;
    return json ? this.check.json(ready) : this.check.text(ready);
  }

  private event(ev: string): string {
    if (!ev.startsWith("data: {")) return ev;
    let parsed: Chunk;
    try {
      parsed = JSON.parse(ev.slice(6)) as Chunk;
    } catch {
      return ev;
    }
    if (parsed.usage) this.usage = parsed.usage;
    if (!Array.isArray(parsed.choices) || parsed.choices.length === 0) return ev;
    // Continuous usage is for the ledger, not the client: a choice's last chunk keeps it (some engines send the final usage there).
    if (parsed.usage && !parsed.choices.some((c) => c.finish_reason)) delete parsed.usage;
    const seen = this.check.decisions.length;
    try {
      for (const c of parsed.choices) this.choice(c);
    } catch (err) {
      if (!(err instanceof GuardBlock)) throw err;
      this.stopped = true;
      this.onDecisions(this.check);
      return blockedEnding(parsed, err.rule, this.usage);
    }
    if (this.check.decisions.length > seen) this.onDecisions(this.check);
    return `data: ${JSON.stringify(parsed)}\n\n`;
  }

  private choice(c: Choice): void {
    const last = c.finish_reason !== null && c.finish_reason !== undefined;
    const i = c.index ?? 0;
    const field = (key: string, v: unknown): unknown => (typeof v === "string" || (last && this.held.has(key)) ? this.release(key, typeof v === "string" ? v : "", last) : v);
    c.text = field(`${i}.text`, c.text);
    const d = c.delta;
    if (!d) return;
    d.content = field(`${i}.content`, d.content);
    d.reasoning_content = field(`${i}.reasoning_content`, d.reasoning_content);
    d.reasoning = field(`${i}.reasoning`, d.reasoning);
    for (const [j, t] of (d.tool_calls ?? []).entries()) {
      const f = t.function;
      if (f && typeof f.arguments === "string") f.arguments = this.release(`${i}.tool.${t.index ?? j}`, f.arguments, false, true);
    }
    if (!last) return;
    // The choice's held arguments, checked whole, go out with its last chunk.
    const prefix = `${i}.tool.`;
    for (const key of [...this.held.keys()].filter((k) => k.startsWith(prefix))) {
      const index = Number(key.slice(prefix.length));
      const args = this.release(key, "", true, true);
      d.tool_calls ??= [];
      const own = d.tool_calls.find((t) => (t.index ?? 0) === index);
      if (own?.function) own.function.arguments = args;
      else d.tool_calls.push({ index, function: { arguments: args } });
    }
  }
}
