// One request's redacted values and their placeholders: the same value is the same `[KIND_n]`
// throughout the request. It lives in memory for the request only: never stored, logged or traced.

export class Redactions {
  private byValue = new Map<string, string>();
  readonly byPlaceholder = new Map<string, string>();
  private counts = new Map<string, number>();

  placeholder(kind: string, value: string): string {
    const known = this.byValue.get(value);
    if (known !== undefined) return known;
    const n = (this.counts.get(kind) ?? 0) + 1;
    this.counts.set(kind, n);
    const p = `[${kind}_${n}]`;
    this.byValue.set(value, p);
    this.byPlaceholder.set(p, value);
    return p;
  }

  get size(): number {
    return this.byPlaceholder.size;
  }
}

/** `[KIND_n]`, as placeholder() writes them. */
export const PLACEHOLDER = /\[[A-Z][A-Z_]*_\d+\]/g;
/** The longest a placeholder may be and still be held back while it is incomplete. */
export const PLACEHOLDER_MAX = 40;

/** The text with every placeholder of this request put back (escaped by `escape`, for JSON inside strings). */
export function restoreText(text: string, r: Redactions, escape?: (v: string) => string): string {
  if (!text.includes("[")) return text;
  return text.replace(PLACEHOLDER, (p) => {
    const v = r.byPlaceholder.get(p);
    return v === undefined ? p : escape ? escape(v) : v;
  });
}
