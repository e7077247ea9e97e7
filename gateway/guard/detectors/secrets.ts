// Secrets: keys of well-known formats, and high-entropy values next to words like password or
// token. A pattern list of our own, kept to the providers' published formats: secretlint (the
// maintained scanner) only lints asynchronously, building a rule context per call, which a request's
// hot path cannot wait on (docs/guardrails.md).
import type { SecretKind } from "../policy.ts";
import { regexSpans, type Span } from "./span.ts";

const FORMATS: Record<Exclude<SecretKind, "password">, RegExp> = {
  aws: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g,
  github: /\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b/g,
  gitlab: /\bglpat-[A-Za-z0-9_-]{20,}/g,
  slack: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  stripe: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b/g,
  google: /\bAIza[0-9A-Za-z_-]{35}/g,
  openai: /\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}/g,
  anthropic: /\bsk-ant-[A-Za-z0-9_-]{32,}/g,
  private_key: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[^]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|$)/g,
  jwt: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
};

/** A value after password/token/secret/api key, `:`, `=` or "is": the value itself is group 1. */
const NEAR_WORD = /\b(?:password|passwd|pwd|passphrase|secret|token|api[_ -]?key|access[_ -]?key)s?\b["']?\s*(?:[:=]|\bis\b)\s*["']?([^\s"'`,;]{8,200})/gi;

/** Shannon entropy in bits per character. */
export function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) h -= (n / s.length) * Math.log2(n / s.length);
  return h;
}

/** Random-looking: 3 bits a character or more, and at least two classes (letters, digits, symbols). */
function highEntropy(v: string): boolean {
  const classes = Number(/[a-z]/.test(v)) + Number(/[A-Z]/.test(v)) + Number(/\d/.test(v)) + Number(/[^A-Za-z0-9]/.test(v));
  return classes >= 2 && entropy(v) >= 3;
}

export const ALL_SECRET_KINDS = [...(Object.keys(FORMATS) as SecretKind[]), "password" as const];

export function secretSpans(text: string, kinds: readonly SecretKind[]): Span[] {
  const out: Span[] = [];
  for (const k of kinds) {
    if (k === "password") out.push(...regexSpans(NEAR_WORD, text, "SECRET", highEntropy, 1));
    else out.push(...regexSpans(FORMATS[k], text, "SECRET"));
  }
  return out;
}
