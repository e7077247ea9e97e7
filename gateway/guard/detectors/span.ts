// What every detector answers: where in the text it found something, and what kind of thing.

export interface Span {
  start: number;
  end: number;
  /** The placeholder's kind, upper case: EMAIL, CARD, SECRET, DENIED… */
  kind: string;
}

/** Every match of a fixed, linear pattern (our own, never an operator's) that `keep` accepts. */
export function regexSpans(re: RegExp, text: string, kind: string, keep?: (m: string) => boolean, group = 0): Span[] {
  const out: Span[] = [];
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const hit = m[group];
    if (hit !== undefined && (keep === undefined || keep(hit))) {
      const start = m.index + (group === 0 ? 0 : m[0].indexOf(hit));
      out.push({ start, end: start + hit.length, kind });
    }
    if (m[0].length === 0) re.lastIndex++;
  }
  return out;
}
