// An outside service as a detector (Azure Content Safety, Lakera, NeMo Guardrails, OpenAI's
// moderation, a Presidio analyzer, a company's own): the text POSTed as JSON in the rule's body
// template, headers read from secret files at each call (so a rotated key needs no reload, and no
// key sits in a policy), and dotted paths into the JSON answer saying "unsafe" and "why". Only the
// text is sent, never who sent it.
import fs from "node:fs/promises";

export interface ServiceCall {
  url: string;
  /** Header name: the file whose trimmed contents are its value. */
  headersFrom: Record<string, string>;
  /** The body; every string holding {{text}} gets the text. */
  body: Record<string, unknown>;
  unsafe: string;
  why: string | null;
}

/** The value at a dotted path (`results.0.flagged`), or undefined. */
export function atPath(v: unknown, path: string): unknown {
  let at = v;
  for (const k of path.split(".")) {
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<string, unknown>)[k];
  }
  return at;
}

/** What counts as "unsafe" at that path: true, a non-empty list or object, a non-zero number, a string other than safe/false/none. */
export function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === "string") return v !== "" && !["false", "safe", "none", "0"].includes(v.toLowerCase());
  if (v !== null && typeof v === "object") return Object.keys(v).length > 0;
  return Boolean(v);
}

function fill(v: unknown, text: string): unknown {
  if (typeof v === "string") return v.includes("{{text}}") ? (v === "{{text}}" ? text : v.replaceAll("{{text}}", text)) : v;
  if (Array.isArray(v)) return v.map((x) => fill(x, text));
  if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fill(x, text)]));
  return v;
}

/** Asks the service; throws on a failure (unreachable, not 2xx, not JSON, aborted), which the policy's `fail` decides. */
export async function askService(s: ServiceCall, text: string, signal: AbortSignal): Promise<{ unsafe: boolean; why: string | null }> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  for (const [name, file] of Object.entries(s.headersFrom)) headers[name] = (await fs.readFile(file, "utf8")).trim();
  const r = await fetch(s.url, { method: "POST", headers, body: JSON.stringify(fill(s.body, text)), signal, redirect: "error" });
  const raw = await r.text();
  // The service's own status and nothing of its answer: an answer may quote the text.
  if (!r.ok) throw new Error(`the service answered ${r.status}`);
  let answer: unknown;
  try {
    answer = JSON.parse(raw);
  } catch {
    throw new Error("the service's answer is not JSON");
  }
  const why = s.why === null ? undefined : atPath(answer, s.why);
  const reason = why === undefined || why === null ? null : (typeof why === "string" ? why : JSON.stringify(why)).slice(0, 100);
  return { unsafe: truthy(atPath(answer, s.unsafe)), why: reason };
}
