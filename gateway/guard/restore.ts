// Restore: the client reads back the values its request's placeholders stand for, in the answer
// only. A streamed placeholder split across SSE events is held back until it is whole; tool-call
// arguments (JSON inside a string) get the values escaped for JSON.
import type { SyncAnswerRewrite } from "../router/answer-rewrite.ts";
import { PLACEHOLDER_MAX, restoreText, type Redactions } from "./redactions.ts";

const jsonEscape = (v: string) => JSON.stringify(v).slice(1, -1);

type Choice = {
  index?: number;
  finish_reason?: string | null;
  text?: string;
  message?: { content?: unknown; reasoning_content?: unknown; tool_calls?: { function?: { arguments?: unknown } }[] };
  delta?: { content?: unknown; reasoning_content?: unknown; tool_calls?: { index?: number; function?: { arguments?: unknown } }[] };
};

/** Where a possibly incomplete placeholder starts at the end of `s`, or -1. */
function heldFrom(s: string): number {
  const at = s.lastIndexOf("[");
  if (at < 0 || s.length - at > PLACEHOLDER_MAX) return -1;
  return /^\[[A-Z_]*\d*$/.test(s.slice(at)) ? at : -1;
}

class StreamRestorer {
  private buf = "";
  /** Text held back per choice and field (content, reasoning, a tool call's arguments). */
  private held = new Map<string, string>();

  constructor(private readonly r: Redactions) {}

  push(chunk: string): string {
    this.buf += chunk;
    let out = "";
    let idx: number;
    while ((idx = this.buf.indexOf("\n\n")) >= 0) {
      out += this.event(this.buf.slice(0, idx + 2));
      this.buf = this.buf.slice(idx + 2);
    }
    return out;
  }

  end(): string {
    const rest = this.buf;
    this.buf = "";
    return rest;
  }

  /** The piece with what was held before it, minus an incomplete placeholder at its end (kept for later). */
  private piece(key: string, s: string, last: boolean, escape?: (v: string) => string): string {
    let t = (this.held.get(key) ?? "") + s;
    const cut = last ? -1 : heldFrom(t);
    if (cut >= 0) {
      this.held.set(key, t.slice(cut));
      t = t.slice(0, cut);
    } else this.held.delete(key);
    return restoreText(t, this.r, escape);
  }

  private event(ev: string): string {
    if (!ev.startsWith("data: {")) return ev;
    let parsed: { choices?: Choice[] };
    try {
      parsed = JSON.parse(ev.slice(6)) as { choices?: Choice[] };
    } catch {
      return ev;
    }
    if (!Array.isArray(parsed.choices) || parsed.choices.length === 0) return ev;
    for (const c of parsed.choices) {
      const last = c.finish_reason !== null && c.finish_reason !== undefined;
      const i = c.index ?? 0;
      if (typeof c.text === "string" || (last && this.held.has(`${i}.text`))) c.text = this.piece(`${i}.text`, c.text ?? "", last);
      const d = c.delta;
      if (!d) continue;
      if (typeof d.content === "string" || (last && this.held.has(`${i}.content`))) d.content = this.piece(`${i}.content`, typeof d.content === "string" ? d.content : "", last);
      if (typeof d.reasoning_content === "string") d.reasoning_content = this.piece(`${i}.reasoning`, d.reasoning_content, last);
      for (const [j, t] of (d.tool_calls ?? []).entries()) {
        const f = t.function;
        if (f && typeof f.arguments === "string") f.arguments = this.piece(`${i}.tool.${t.index ?? j}`, f.arguments, last, jsonEscape);
      }
    }
    return `data: ${JSON.stringify(parsed)}\n\n`;
  }
}

/** Restores a whole answer's texts (chat messages, completions' text, tool-call arguments). */
function restoreWhole(text: string, r: Redactions): string {
  if (!text.includes("[")) return text;
  let parsed: { choices?: Choice[] };
  try {
    parsed = JSON.parse(text) as { choices?: Choice[] };
  } catch {
    return text;
  }
  for (const c of parsed.choices ?? []) {
    if (typeof c.text === "string") c.text = restoreText(c.text, r);
    const m = c.message;
    if (!m) continue;
    if (typeof m.content === "string") m.content = restoreText(m.content, r);
    if (typeof m.reasoning_content === "string") m.reasoning_content = restoreText(m.reasoning_content, r);
    for (const t of m.tool_calls ?? []) if (t.function && typeof t.function.arguments === "string") t.function.arguments = restoreText(t.function.arguments, r, jsonEscape);
  }
  return JSON.stringify(parsed);
}

export function restorer(r: Redactions): SyncAnswerRewrite {
  return { whole: (text) => restoreWhole(text, r), stream: () => new StreamRestorer(r) };
}
