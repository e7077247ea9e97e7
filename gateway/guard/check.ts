// One text checked by a direction's rules: `block` throws (naming the rule, never the text), `flag`
// is recorded once per rule, `redact` rewrites each value to its placeholder (./redactions.ts).
// The input stage (./input.ts) and the output stage (./output-whole.ts, ./output-stream.ts) share it.
import { ApiError } from "../errors.ts";
import { injectionSpans } from "./detectors/injection.ts";
import { notAllowed, re2Spans } from "./detectors/patterns.ts";
import { piiSpans } from "./detectors/pii.ts";
import { secretSpans } from "./detectors/secrets.ts";
import type { Span } from "./detectors/span.ts";
import type { CompiledRule } from "./merge.ts";
import type { Direction, PiiKind, SecretKind } from "./policy.ts";
import { Redactions } from "./redactions.ts";

export interface GuardDecision {
  policy: string;
  rule: string;
  action: "block" | "flag";
  direction: Direction;
}

/** A request or answer a rule blocked: OpenAI's content_policy_violation (Anthropic's shape on /v1/messages). */
export class GuardBlock extends ApiError {
  constructor(
    readonly decisions: GuardDecision[],
    /** What the rule said beyond its name (a judge's category), never the text. */
    detail?: string,
  ) {
    const d = decisions[decisions.length - 1]!;
    const what = d.direction === "input" ? "this request" : "the answer";
    super("invalid_request", `${what} was blocked by the guardrail rule '${d.rule}' of policy '${d.policy}' (${d.direction}${detail ? `, ${detail}` : ""})`, { code: "content_policy_violation" });
  }

  /** The rule that blocked. */
  get rule(): GuardDecision {
    return this.decisions[this.decisions.length - 1]!;
  }
}

function spansOf(r: CompiledRule, text: string, allow: Span[] | null): Span[] {
  switch (r.detector) {
    case "pii":
      return piiSpans(text, r.kinds as PiiKind[]);
    case "secrets":
      return secretSpans(text, r.kinds as SecretKind[]);
    case "injection":
      return injectionSpans(text, r.patterns);
    case "deny":
      return notAllowed(re2Spans(r.patterns, text, "DENIED"), allow ?? []);
    case "allow":
    case "judge":
    case "service":
      // The judge and outside services are asked apart, asynchronously (./judge-stage.ts).
      return [];
  }
}

export class TextCheck {
  readonly decisions: GuardDecision[] = [];
  redactions: Redactions | null = null;
  private readonly flagged = new Set<string>();
  private readonly allowRules: CompiledRule[];
  private readonly rules: CompiledRule[];

  constructor(
    rules: readonly CompiledRule[],
    private readonly direction: Direction,
  ) {
    this.allowRules = rules.filter((r) => r.detector === "allow");
    this.rules = rules.filter((r) => r.detector !== "allow" && r.detector !== "judge" && r.detector !== "service");
  }

  /** The text as it may pass; throws GuardBlock. */
  text(text: string): string {
    if (text.length === 0) return text;
    const allow = this.allowRules.length ? this.allowRules.flatMap((r) => re2Spans(r.patterns, text, "ALLOW")) : null;
    let redact: Span[] = [];
    for (const r of this.rules) {
      const spans = spansOf(r, text, allow);
      if (spans.length === 0) continue;
      if (r.action === "block") {
        this.decisions.push({ policy: r.policy, rule: r.name, action: "block", direction: this.direction });
        throw new GuardBlock(this.decisions);
      }
      if (r.action === "flag") {
        const id = `${r.policy}\0${r.name}`;
        if (!this.flagged.has(id)) this.decisions.push({ policy: r.policy, rule: r.name, action: "flag", direction: this.direction });
        this.flagged.add(id);
      } else redact = redact.concat(spans);
    }
    return redact.length ? this.rewrite(text, redact) : text;
  }

  /** Each span (overlaps: the earlier, then the longer, wins) replaced by its value's placeholder. */
  private rewrite(text: string, spans: Span[]): string {
    spans.sort((a, b) => a.start - b.start || b.end - a.end);
    this.redactions ??= new Redactions();
    let out = "";
    let at = 0;
    for (const s of spans) {
      if (s.start < at) continue;
      out += text.slice(at, s.start) + this.redactions.placeholder(s.kind, text.slice(s.start, s.end));
      at = s.end;
    }
    return out + text.slice(at);
  }

  /** A string, or a list of strings and content parts ({type:"text", text}), rewritten where needed. */
  content(v: unknown): unknown {
    if (typeof v === "string") return this.text(v);
    if (!Array.isArray(v)) return v;
    let changed = false;
    const out = v.map((part: unknown) => {
      let next = part;
      if (typeof part === "string") next = this.text(part);
      else if (part !== null && typeof part === "object" && typeof (part as { text?: unknown }).text === "string") {
        const t = this.text((part as { text: string }).text);
        if (t !== (part as { text: string }).text) next = { ...(part as object), text: t };
      }
      if (next !== part) changed = true;
      return next;
    });
    return changed ? out : v;
  }

  /** Tool-call arguments (JSON in a string): each string value in it checked, so a redaction keeps the JSON valid. */
  json(args: string): string {
    let parsed: unknown;
    try {
      parsed = JSON.parse(args);
    } catch {
      return this.text(args);
    }
    let changed = false;
    const walk = (v: unknown): unknown => {
      if (typeof v === "string") {
        const t = this.text(v);
        if (t !== v) changed = true;
        return t;
      }
      if (Array.isArray(v)) return v.map(walk);
      if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
      return v;
    };
    const out = walk(parsed);
    return changed ? JSON.stringify(out) : args;
  }
}
