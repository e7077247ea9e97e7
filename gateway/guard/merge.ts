// The policies that apply to a request, merged the stricter way: a rule two policies both name
// keeps the stricter action (block over redact over flag), fail closed wins over open, buffer_all
// over sentence, restore when any policy restores. Every rule remembers the policy it came from.
import type { RE2JS } from "re2js";
import type { KeyInfo } from "../auth/key-cache.ts";
import { DEFAULT_PII_KINDS } from "./detectors/pii.ts";
import { ALL_SECRET_KINDS } from "./detectors/secrets.ts";
import type { ServiceCall } from "./service-detector.ts";
import { compilePattern, type Action, type PiiKind, type PolicyDocument, type PolicyRule, type SecretKind } from "./policy.ts";

export interface CompiledRule {
  policy: string;
  name: string;
  detector: PolicyRule["detector"];
  action: Action | "allow";
  kinds: string[];
  patterns: RE2JS[];
  /** A judge rule's model and budget (ms); its `kinds` are the categories that count (empty: any). */
  model?: string;
  timeoutMs?: number;
  /** A service rule's call (./service-detector.ts). */
  service?: ServiceCall;
}

export interface MergedPolicy {
  policies: string[];
  fail: "open" | "closed";
  restore: boolean;
  stream: "sentence" | "buffer_all";
  input: CompiledRule[];
  output: CompiledRule[];
  /** Some input rule asks a judge or a service (the asynchronous stage, ./judge-stage.ts). */
  asks: boolean;
  /** Some output rule does (./output-asks.ts). */
  outputAsks: boolean;
}

export interface StoredPolicy {
  name: string;
  version: number;
  doc: PolicyDocument;
}

const STRICTNESS: Record<CompiledRule["action"], number> = { allow: 0, flag: 1, redact: 2, block: 3 };

export function compileRule(policy: string, r: PolicyRule): CompiledRule {
  const kinds = r.kinds ?? r.categories ?? (r.detector === "pii" ? [...DEFAULT_PII_KINDS] : r.detector === "secrets" ? [...ALL_SECRET_KINDS] : []);
  const judge = r.detector === "judge" ? { model: r.model!, timeoutMs: (r.timeout ?? 5) * 1000 } : {};
  const service =
    r.detector === "service" ? { timeoutMs: (r.timeout ?? 5) * 1000, service: { url: r.url!, headersFrom: r.headers_from ?? {}, body: r.body ?? { text: "{{text}}" }, unsafe: r.unsafe!, why: r.why ?? null } } : {};
  return { policy, name: r.name, detector: r.detector, action: r.action ?? "allow", kinds, patterns: (r.patterns ?? []).map((p) => compilePattern(p)), ...judge, ...service };
}

/** Whether a policy attached to `scope` applies to this key and model. */
export function applies(scope: string, key: Pick<KeyInfo, "id" | "projectId" | "teamId" | "orgId">, model: string): boolean {
  if (scope === "default") return true;
  const at = scope.indexOf(":");
  const [kind, id] = [scope.slice(0, at), scope.slice(at + 1)];
  return (
    (kind === "org" && id === key.orgId) || (kind === "team" && id === key.teamId) || (kind === "project" && id === key.projectId) || (kind === "key" && id === key.id) || (kind === "model" && id === model)
  );
}

export function merge(policies: readonly StoredPolicy[]): MergedPolicy {
  const m: MergedPolicy = { policies: [], fail: "open", restore: false, stream: "sentence", input: [], output: [], asks: false, outputAsks: false };
  for (const p of policies) {
    m.policies.push(`${p.name}@${p.version}`);
    if (p.doc.fail === "closed") m.fail = "closed";
    if (p.doc.restore) m.restore = true;
    if (p.doc.stream === "buffer_all") m.stream = "buffer_all";
    for (const dir of ["input", "output"] as const) {
      for (const r of p.doc[dir]) {
        const c = compileRule(p.name, r);
        const same = m[dir].findIndex((x) => x.name === c.name && x.detector === c.detector);
        if (same < 0) m[dir].push(c);
        else m[dir][same] = mergeRule(m[dir][same]!, c);
      }
    }
  }
  const asks = (r: CompiledRule) => r.detector === "judge" || r.detector === "service";
  m.asks = m.input.some(asks);
  m.outputAsks = m.output.some(asks);
  return m;
}

/** Two rules of one name and detector: the stricter action, the union of kinds and patterns. */
function mergeRule(a: CompiledRule, b: CompiledRule): CompiledRule {
  const strict = STRICTNESS[b.action] > STRICTNESS[a.action] ? b : a;
  return { ...strict, kinds: [...new Set([...a.kinds, ...b.kinds])] as (PiiKind | SecretKind)[], patterns: [...a.patterns, ...b.patterns] };
}

/** The merged policy as an operator reads it (explain): each rule with the policy it came from. */
export function describe(m: MergedPolicy): Record<string, unknown> {
  const rule = (r: CompiledRule) => ({ name: r.name, detector: r.detector, action: r.action, kinds: r.kinds, patterns: r.patterns.map((p) => p.pattern()), ...(r.model && { model: r.model, timeoutMs: r.timeoutMs }), ...(r.service && { url: r.service.url, timeoutMs: r.timeoutMs }), from: r.policy });
  return { policies: m.policies, fail: m.fail, restore: m.restore, stream: m.stream, input: m.input.map(rule), output: m.output.map(rule) };
}
