// The output stage on a whole answer (not streamed): the texts the client will read (chat content,
// reasoning, tool-call arguments, completions' text) checked by the output rules after restore.
// A block throws GuardBlock, so the client gets the 400 in its API's shape instead of the answer.
import type { TextCheck } from "./check.ts";

type Choice = {
  text?: unknown;
  message?: { content?: unknown; reasoning_content?: unknown; reasoning?: unknown; tool_calls?: { function?: { arguments?: unknown } }[] };
};

/** The answer (JSON) as it may pass: the same text when nothing was redacted; throws GuardBlock. */
export function checkWholeAnswer(text: string, c: TextCheck): string {
  let parsed: { choices?: Choice[] };
  try {
    parsed = JSON.parse(text) as { choices?: Choice[] };
  } catch {
    return text;
  }
  let changed = false;
  const str = (v: unknown, f: (s: string) => string): unknown => {
    if (typeof v !== "string") return v;
    const out = f(v);
    if (out !== v) changed = true;
    return out;
  };
  const t = (s: string) => c.text(s);
  for (const ch of parsed.choices ?? []) {
    ch.text = str(ch.text, t);
    const m = ch.message;
    if (!m) continue;
    m.content = str(m.content, t);
    m.reasoning_content = str(m.reasoning_content, t);
    m.reasoning = str(m.reasoning, t);
    for (const call of m.tool_calls ?? []) if (call.function) call.function.arguments = str(call.function.arguments, (s) => c.json(s));
  }
  return changed ? JSON.stringify(parsed) : text;
}
