// Personal data: each kind found with the library that knows it best (docs/guardrails.md says why).
// Phone numbers by libphonenumber-js (international numbers, +country), IBANs by ibantools
// (country lengths and checksum), IP addresses by node's own isIP, cards and TR kimlik by their
// checksums (./checksums.ts), US SSNs by their format, person names by compromise (opt-in: it
// costs milliseconds a request, where every other kind costs microseconds).
import { createHash } from "node:crypto";
import { isIP } from "node:net";
import { createRequire } from "node:module";
import type nlpType from "compromise";
import { electronicFormatIBAN, isValidIBAN } from "ibantools";
import { parsePhoneNumberFromString } from "libphonenumber-js";
import type { PiiKind } from "../policy.ts";
import { luhnValid, trKimlikValid } from "./checksums.ts";
import { regexSpans, type Span } from "./span.ts";

/** The kinds a pii rule looks for when it names none: every one but person names (see above). */
export const DEFAULT_PII_KINDS: readonly PiiKind[] = ["email", "phone", "iban", "card", "ip", "tr_kimlik", "us_ssn"];

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}/g;
const IBAN = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g;
const CARD = /\b\d(?:[ -]?\d){12,18}\b/g;
const IPV4 = /\b\d{1,3}(?:\.\d{1,3}){3}\b/g;
const IPV6 = /(?<![0-9A-Fa-f:])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![0-9A-Fa-f:])/g;
/** A run that could be an international number; libphonenumber-js decides. Its own text scan costs ~400 µs a prompt, this ~5. */
const PHONE = /\+[1-9](?:[ .-]?\(?\d{1,4}\)?){2,7}/g;
const TR_KIMLIK = /\b[1-9]\d{10}\b/g;
const US_SSN = /\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b/g;

const FINDERS: Record<PiiKind, (text: string) => Span[]> = {
  email: (t) => (t.includes("@") ? regexSpans(EMAIL, t, "EMAIL") : []),
  phone: (t) => (t.includes("+") ? regexSpans(PHONE, t, "PHONE", validPhone) : []),
  iban: (t) => regexSpans(IBAN, t, "IBAN", (m) => isValidIBAN(electronicFormatIBAN(m) ?? "")),
  card: (t) => regexSpans(CARD, t, "CARD", luhnValid),
  ip: (t) => [...regexSpans(IPV4, t, "IP", (m) => isIP(m) === 4), ...(t.includes("::") || /:[0-9A-Fa-f]{1,4}:/.test(t) ? regexSpans(IPV6, t, "IP", (m) => isIP(m) === 6) : [])],
  tr_kimlik: (t) => regexSpans(TR_KIMLIK, t, "TR_KIMLIK", trKimlikValid),
  us_ssn: (t) => regexSpans(US_SSN, t, "US_SSN"),
  person: personSpans,
};

/**
 * libphonenumber-js's verdict costs ~100 µs a number, so verdicts are remembered (bounded): a chat
 * sends its whole history again each turn. Kept by the candidate's hash, so no number lingers in
 * memory past its request.
 */
const phoneVerdicts = new Map<string, boolean>();
function validPhone(m: string): boolean {
  const id = createHash("sha256").update(m).digest("base64");
  let v = phoneVerdicts.get(id);
  if (v === undefined) {
    v = parsePhoneNumberFromString(m)?.isValid() === true;
    if (phoneVerdicts.size >= 10_000) phoneVerdicts.clear();
    phoneVerdicts.set(id, v);
  }
  return v;
}

// compromise (person names, opt-in) takes a quarter of a second to load: it is loaded when a policy
// that asks for names is loaded (preloadPersonNames), not at every gateway start. Its CommonJS
// build loads in two thirds of the time of its ES modules.
const requireCjs = createRequire(import.meta.url);
let nlp: typeof nlpType | undefined;
const people = (text: string): string[] => (nlp ??= requireCjs("compromise") as typeof nlpType)(text).people().out("array") as string[];

/** Loads the person-name model now, so no request waits for it. */
export function preloadPersonNames(): void {
  people("");
}

function personSpans(text: string): Span[] {
  const out: Span[] = [];
  for (const name of new Set(people(text))) {
    const clean = name.replace(/[.,;:!?]+$/, "");
    for (let at = text.indexOf(clean); at >= 0 && clean; at = text.indexOf(clean, at + clean.length)) out.push({ start: at, end: at + clean.length, kind: "PERSON" });
  }
  return out;
}

export function piiSpans(text: string, kinds: readonly PiiKind[]): Span[] {
  const out: Span[] = [];
  for (const k of kinds) out.push(...FINDERS[k](text));
  return out;
}
