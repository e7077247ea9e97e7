// The input stage: every text the model will read (user turns, the system prompt, tool results,
// a completion's prompt, embeddings' input) checked by the merged policy's input rules. `block`
// refuses the request naming the rule, never the text; `flag` lets it through and is recorded;
// `redact` rewrites each value to its placeholder (./redactions.ts).
import { ApiError } from "../errors.ts";
import { injectionSpans } from "./detectors/injection.ts";
import { notAllowed, re2Spans } from "./detectors/patterns.ts";
import { piiSpans } from "./detectors/pii.ts";
import { secretSpans } from "./detectors/secrets.ts";
import type { Span } from "./detectors/span.ts";
import type { CompiledRule, MergedPolicy } from "./merge.ts";
import type { PiiKind, SecretKind } from "./policy.ts";
import { Redactions } from "./redactions.ts";

export interface GuardDecision {
  policy: string;
  rule: string;
  action: "block" | "flag";
  direction: "input" | "output";
}

/** A request a rule blocked: OpenAI's content_policy_violation (Anthropic's shape on /v1/messages). */
export class GuardBlock extends ApiError {
  constructor(readonly decisions: GuardDecision[]) {
    const d = decisions[decisions.length - 1]!;
    super("invalid_request", `this request was blocked by the guardrail rule '${d.rule}' of policy '${d.policy}' (${d.direction})`, { code: "content_policy_violation" });
  }
}

export interface InputOutcome {
  /** The body to send on: the same object when nothing was redacted. */
  body: Record<string, unknown>;
  redactions: Redactions | null;
  decisions: GuardDecision[];
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
      return [];
  }
}

class InputCheck {
  readonly decisions: GuardDecision[] = [];
  redactions: Redactions | null = null;
  private readonly flagged = new Set<string>();
  private readonly allowRules: CompiledRule[];
  private readonly rules: CompiledRule[];

  constructor(m: MergedPolicy) {
    this.allowRules = m.input.filter((r) => r.detector === "allow");
    this.rules = m.input.filter((r) => r.detector !== "allow");
  }

  /** The text as the model will read it; throws GuardBlock. */
  text(text: string): string {
    if (text.length === 0) return text;
    const allow = this.allowRules.length ? this.allowRules.flatMap((r) => re2Spans(r.patterns, text, "ALLOW")) : null;
    let redact: Span[] = [];
    for (const r of this.rules) {
      const spans = spansOf(r, text, allow);
      if (spans.length === 0) continue;
      if (r.action === "block") {
        this.decisions.push({ policy: r.policy, rule: r.name, action: "block", direction: "input" });
        throw new GuardBlock(this.decisions);
      }
      if (r.action === "flag") {
        const id = `${r.policy}\0${r.name}`;
        if (!this.flagged.has(id)) this.decisions.push({ policy: r.policy, rule: r.name, action: "flag", direction: "input" });
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
}

/** Checks a request body (in OpenAI's shapes: /v1/messages is translated before it gets here). */
export function checkInput(m: MergedPolicy, body: Record<string, unknown>): InputOutcome {
  const c = new InputCheck(m);
  let out = body;
  const set = (field: string, v: unknown) => {
    if (v !== body[field]) out = out === body ? { ...body, [field]: v } : Object.assign(out, { [field]: v });
  };
  if (Array.isArray(body.messages)) {
    let changed = false;
    const msgs = (body.messages as unknown[]).map((msg) => {
      if (msg === null || typeof msg !== "object") return msg;
      const content = (msg as { content?: unknown }).content;
      const next = c.content(content);
      if (next === content) return msg;
      changed = true;
      return { ...(msg as object), content: next };
    });
    if (changed) set("messages", msgs);
  }
  if (body.prompt !== undefined) set("prompt", c.content(body.prompt));
  if (body.input !== undefined) set("input", c.content(body.input));
  return { body: out, redactions: c.redactions, decisions: c.decisions };
}
