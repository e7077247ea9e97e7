// Training data is checked before anything starts: one JSON object {"q": …, "a": …} a line, both
// non-empty strings, sizes bounded. A refusal names the line and the reason.
import { z } from "zod";

export const TRAINING_LIMITS = { maxLines: 50_000, maxFieldChars: 32_768 } as const;

const pair = z.object({
  q: z.string().min(1, "q is empty").max(TRAINING_LIMITS.maxFieldChars, `q is longer than ${TRAINING_LIMITS.maxFieldChars} characters`),
  a: z.string().min(1, "a is empty").max(TRAINING_LIMITS.maxFieldChars, `a is longer than ${TRAINING_LIMITS.maxFieldChars} characters`),
});

export type DataCheck = { ok: true; lines: number } | { ok: false; line: number; reason: string };

export function checkTrainingData(text: string): DataCheck {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  if (lines.length === 0) return { ok: false, line: 0, reason: "the data has no line" };
  if (lines.length > TRAINING_LIMITS.maxLines) return { ok: false, line: TRAINING_LIMITS.maxLines + 1, reason: `more than ${TRAINING_LIMITS.maxLines} lines` };
  for (const [i, line] of lines.entries()) {
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      return { ok: false, line: i + 1, reason: "not JSON" };
    }
    if (typeof v !== "object" || v === null || Array.isArray(v)) return { ok: false, line: i + 1, reason: 'not an object {"q": …, "a": …}' };
    const extra = Object.keys(v).filter((k) => k !== "q" && k !== "a");
    if (extra.length > 0) return { ok: false, line: i + 1, reason: `unexpected key ${extra.map((k) => `"${k}"`).join(", ")}: only "q" and "a"` };
    const r = pair.safeParse(v);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      const key = String(issue.path[0] ?? "");
      const reason = issue.code !== "invalid_type" ? issue.message : key in v ? `${key} must be a string` : `${key} is missing`;
      return { ok: false, line: i + 1, reason };
    }
  }
  return { ok: true, lines: lines.length };
}
