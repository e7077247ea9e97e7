// Operator-written deny and allow patterns, run with re2js: linear in the text whatever the pattern.
import type { RE2JS } from "re2js";
import type { Span } from "./span.ts";

export function re2Spans(patterns: readonly RE2JS[], text: string, kind: string): Span[] {
  const out: Span[] = [];
  for (const p of patterns) {
    const m = p.matcher(text);
    while (m.find()) {
      if (m.end() > m.start()) out.push({ start: m.start(), end: m.end(), kind });
    }
  }
  return out;
}

/** Deny spans that no allow span covers: an allow pattern overrides a deny one where they meet. */
export function notAllowed(deny: Span[], allow: Span[]): Span[] {
  return allow.length === 0 ? deny : deny.filter((d) => !allow.some((a) => a.start < d.end && d.start < a.end));
}
