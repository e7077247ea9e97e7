// A guardrail policy as an operator writes it (YAML or JSON), checked field by field: a refusal
// names the field at fault. Operator-written patterns compile with re2js, a linear-time engine, so
// no pattern can backtrack catastrophically on a request's text; one it refuses is refused here.
import { RE2JS } from "re2js";
import { parse as parseYaml } from "yaml";
import { z } from "zod";

export const PII_KINDS = ["email", "phone", "iban", "card", "ip", "tr_kimlik", "us_ssn", "person"] as const;
export const SECRET_KINDS = ["aws", "github", "gitlab", "slack", "stripe", "google", "openai", "anthropic", "private_key", "jwt", "password"] as const;
export type PiiKind = (typeof PII_KINDS)[number];
export type SecretKind = (typeof SECRET_KINDS)[number];
export const DETECTORS = ["pii", "secrets", "injection", "deny", "allow", "judge", "service"] as const;
export const ACTIONS = ["redact", "block", "flag"] as const;
export type Action = (typeof ACTIONS)[number];
export type Direction = "input" | "output";

const DOTTED = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
const NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;
const SCOPE = /^(default|(org|team|project|key|model):[^\s:][^\s]{0,199})$/;

const rule = z
  .object({
    name: z.string().regex(NAME, "must be 1–63 of a-z 0-9 . _ -, starting with a letter or digit"),
    detector: z.enum(DETECTORS),
    kinds: z.array(z.string()).min(1, "must name at least one kind when given").optional(),
    patterns: z.array(z.string().min(1, "must not be empty").max(2000, "must be at most 2000 characters")).min(1, "must hold at least one pattern when given").optional(),
    action: z.enum(ACTIONS).optional(),
    model: z.string().min(1).max(200).optional(),
    timeout: z.number().positive().max(60, "must be at most 60 (seconds)").optional(),
    categories: z.array(z.string().min(1).max(100)).min(1, "must name at least one category when given").optional(),
    url: z.url({ protocol: /^https?$/, error: "must be an http or https URL" }).optional(),
    headers_from: z.record(z.string().regex(/^[A-Za-z0-9-]{1,100}$/, "must be a header name"), z.string().min(1).max(1000)).optional().describe("header name: a file whose contents (trimmed) are its value, read at each call"),
    body: z.record(z.string(), z.json()).optional().describe("the JSON body; every string holding {{text}} gets the text"),
    unsafe: z.string().regex(DOTTED, "must be a dotted path into the answer, e.g. results.0.flagged").optional(),
    why: z.string().regex(DOTTED, "must be a dotted path into the answer").optional(),
  })
  .strict()
  .describe(
    "kinds only on pii and secrets rules, of that detector; patterns (re2 syntax) required on deny and allow, allowed on injection, refused elsewhere; an allow rule takes no action and needs a deny rule in its direction; every other rule needs one; an injection is not redacted; rule names are unique in a direction; model (required), timeout (seconds, default 5) and categories only on judge rules; url and unsafe (required), headers_from, body, why and timeout only on service rules; judge and service rules (input or output) block or flag",
  );

export const policyDocument = z
  .object({
    name: z.string().regex(NAME, "must be 1–63 of a-z 0-9 . _ -, starting with a letter or digit"),
    scope: z.string().regex(SCOPE, "must be 'default' or one of org:ID, team:ID, project:ID, key:ID, model:NAME").default("default"),
    fail: z.enum(["open", "closed"]).default("open"),
    restore: z.boolean().default(false),
    stream: z.enum(["sentence", "buffer_all"]).default("sentence"),
    input: z.array(rule).default([]),
    output: z.array(rule).default([]),
  })
  .strict()
  .describe("at least one rule in input or output; restore needs an input rule that redacts");

export type PolicyRule = z.infer<typeof rule>;
export type PolicyDocument = z.infer<typeof policyDocument>;

/** A policy refused: the field path at fault and why. */
export class PolicyError extends Error {
  constructor(
    readonly field: string | null,
    readonly reason: string,
  ) {
    super(field ? `${field}: ${reason}` : reason);
  }
}

/** Reads a policy file's text (YAML, of which JSON is a part); throws PolicyError. */
export function parsePolicyText(text: string): PolicyDocument {
  let raw: unknown;
  try {
    raw = parseYaml(text, { prettyErrors: true, uniqueKeys: true });
  } catch (e) {
    throw new PolicyError(null, `not valid YAML or JSON: ${(e as Error).message.split("\n")[0]}`);
  }
  return checkPolicy(raw);
}

/** Checks a policy document's fields and that they agree with each other; throws PolicyError. */
export function checkPolicy(raw: unknown): PolicyDocument {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw new PolicyError(null, "a policy must be an object (a YAML mapping)");
  const r = policyDocument.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new PolicyError(issue.path.map(String).join(".") || null, issue.message);
  }
  const doc = r.data;
  if (doc.input.length === 0 && doc.output.length === 0) throw new PolicyError("input", "a policy needs at least one rule, in input or output");
  for (const dir of ["input", "output"] as const) doc[dir].forEach((x, i) => checkRule(x, `${dir}.${i}`, doc[dir]));
  if (doc.restore && !doc.input.some((x) => x.action === "redact")) throw new PolicyError("restore", "restore puts redacted values back, but no input rule redacts");
  return doc;
}

function checkRule(x: PolicyRule, at: string, all: PolicyRule[]): void {
  if (all.findIndex((y) => y.name === x.name) !== all.indexOf(x)) throw new PolicyError(`${at}.name`, `'${x.name}' names two rules in this direction`);
  if (x.detector === "allow") {
    if (x.action !== undefined) throw new PolicyError(`${at}.action`, "an allow rule lets text through; it takes no action");
    if (!all.some((y) => y.detector === "deny")) throw new PolicyError(`${at}.detector`, "an allow rule overrides deny rules, and this direction has none");
  } else if (x.action === undefined) throw new PolicyError(`${at}.action`, "required: redact, block or flag");
  if (x.detector === "injection" && x.action === "redact") throw new PolicyError(`${at}.action`, "an injection cannot be redacted away; block or flag it");
  checkJudge(x, at);
  checkService(x, at);
  const kinds = x.detector === "pii" ? PII_KINDS : x.detector === "secrets" ? SECRET_KINDS : null;
  if (x.kinds !== undefined) {
    if (kinds === null) throw new PolicyError(`${at}.kinds`, `the ${x.detector} detector takes no kinds`);
    x.kinds.forEach((k, j) => {
      if (!(kinds as readonly string[]).includes(k)) throw new PolicyError(`${at}.kinds.${j}`, `unknown ${x.detector} kind '${k}'; kinds: ${kinds.join(", ")}`);
    });
  }
  if (x.detector === "deny" || x.detector === "allow") {
    if (x.patterns === undefined) throw new PolicyError(`${at}.patterns`, `required: a ${x.detector} rule matches its patterns`);
  } else if (x.patterns !== undefined && x.detector !== "injection") throw new PolicyError(`${at}.patterns`, `the ${x.detector} detector takes no patterns`);
  x.patterns?.forEach((p, j) => compilePattern(p, `${at}.patterns.${j}`));
}

function checkService(x: PolicyRule, at: string): void {
  if (x.detector !== "service") {
    for (const f of ["url", "headers_from", "body", "unsafe", "why"] as const) if (x[f] !== undefined) throw new PolicyError(`${at}.${f}`, `only a service rule takes ${f}`);
    return;
  }
  if (x.url === undefined) throw new PolicyError(`${at}.url`, "required: the service's URL");
  if (x.unsafe === undefined) throw new PolicyError(`${at}.unsafe`, "required: the dotted path into the service's answer that says the text is unsafe");
  if (x.action === "redact") throw new PolicyError(`${at}.action`, "a service says safe or unsafe; it cannot redact: block or flag");
  if (x.body !== undefined && !JSON.stringify(x.body).includes("{{text}}")) throw new PolicyError(`${at}.body`, "the body must hold {{text}} where the text goes");
}

function checkJudge(x: PolicyRule, at: string): void {
  if (x.detector !== "judge") {
    for (const f of ["model", "categories"] as const) if (x[f] !== undefined) throw new PolicyError(`${at}.${f}`, `only a judge rule takes ${f}`);
    if (x.timeout !== undefined && x.detector !== "service") throw new PolicyError(`${at}.timeout`, "only a judge or service rule takes timeout");
    return;
  }
  if (x.model === undefined) throw new PolicyError(`${at}.model`, "required: the model (served by llmgw) that judges the text");
  if (x.action === "redact") throw new PolicyError(`${at}.action`, "a judge says safe or unsafe; it cannot redact: block or flag");
}

/** Compiles an operator's pattern with re2js (linear time), or throws PolicyError saying why not. */
export function compilePattern(p: string, at = "pattern"): RE2JS {
  try {
    return RE2JS.compile(p);
  } catch (e) {
    throw new PolicyError(at, `re2 refuses this pattern (it guarantees linear time, so it has no backreferences or lookaround): ${(e as Error).message}`);
  }
}
