// The judge and outside-service rules: on the input, the texts the model will read (after
// redaction); on the output, the answer as the client reads it (./output-asks.ts). Each is asked of
// its rule's judge model or service. Unsafe (for a judge, in one of the rule's
// categories when it names any) blocks naming the category or the service's reason, or is flagged;
// one that fails or runs out of time follows the policy's `fail`: open lets the request through
// (logged), closed answers 503 guard_failed.
import { log } from "../../common/logging.ts";
import type { KeyInfo } from "../auth/key-cache.ts";
import { ApiError } from "../errors.ts";
import { GuardBlock, type GuardDecision } from "./check.ts";
import { JudgeFailed } from "./judge.ts";
import type { CompiledRule, MergedPolicy } from "./merge.ts";
import type { Direction } from "./policy.ts";
import { askService } from "./service-detector.ts";
import type { GuardService } from "./service.ts";

/** Every text of a request body in OpenAI's shapes (messages, prompt, input; a rerank's query and documents), in order. */
export function bodyTexts(body: Record<string, unknown>): string {
  const out: string[] = [];
  const add = (v: unknown) => {
    if (typeof v === "string") out.push(v);
    else if (Array.isArray(v)) {
      for (const part of v) {
        const t = typeof part === "string" ? part : (part as { text?: unknown } | null)?.text;
        if (typeof t === "string") out.push(t);
      }
    }
  };
  if (Array.isArray(body.messages)) for (const m of body.messages) add((m as { content?: unknown } | null)?.content);
  add(body.prompt);
  add(body.input);
  add(body.query);
  add(body.documents);
  return out.join("\n\n");
}

/** A judge or service rule that failed under `fail: closed`: 503 guard_failed naming the rule (a stream ends naming it). */
export class GuardFailed extends ApiError {
  constructor(
    readonly decision: Omit<GuardDecision, "action">,
    what: string,
  ) {
    super("unavailable", `the guardrail ${what} '${decision.rule}' did not answer and this policy fails closed; try again`, { code: "guard_failed", retryAfterS: 1 });
  }
}

/** Asks a direction's judge and service rules about a text; throws GuardBlock or GuardFailed. */
export type Ask = (text: string) => Promise<void>;

/**
 * The asker for one request's rules in a direction. Flags are recorded once per rule however many
 * times it is asked (a stream asks each sentence), a block as it happens. `prompt`, on the output:
 * the request's texts, which a judge reads as the turn the answer replies to.
 */
export function asker(guard: GuardService, policy: MergedPolicy, direction: Direction, key: KeyInfo, model: string, requestId: string | undefined, prompt?: string): Ask {
  const rules = policy[direction].filter((r) => r.detector === "judge" || r.detector === "service");
  const flagged = new Set<string>();
  return async (text) => {
    if (!text) return;
    const decisions: GuardDecision[] = [];
    try {
      for (const r of rules) {
        const started = performance.now();
        let outcome = "failed";
        try {
          const v = await (r.service ? serviceVerdict(r, text) : judgeVerdict(guard, r, text, prompt));
          outcome = v.unsafe ? "unsafe" : "safe";
          if (!v.unsafe) continue;
          if (r.action === "block") {
            decisions.push({ policy: r.policy, rule: r.name, action: "block", direction });
            throw new GuardBlock(decisions, v.detail ?? undefined);
          }
          if (!flagged.has(r.name)) decisions.push({ policy: r.policy, rule: r.name, action: "flag", direction });
          flagged.add(r.name);
        } catch (err) {
          if (!(err instanceof JudgeFailed)) throw err;
          const what = r.service ? "service" : "judge";
          log.warn(`a guardrail ${what} failed`, { requestId, policy: r.policy, rule: r.name, direction, fail: policy.fail, error: err.message });
          if (policy.fail === "closed") throw new GuardFailed({ policy: r.policy, rule: r.name, direction }, what);
        } finally {
          const seconds = (performance.now() - started) / 1000;
          if (r.model) guard.judgeSeconds.observe({ model: r.model, outcome }, seconds);
          else guard.serviceSeconds.observe({ policy: r.policy, rule: r.name, outcome }, seconds);
        }
      }
    } finally {
      guard.record(decisions, key, model);
    }
  };
}

/** The input's judge and service rules asked about every text the model will read. */
export async function judgeInput(guard: GuardService, policy: MergedPolicy, body: Record<string, unknown>, key: KeyInfo, model: string, requestId: string | undefined): Promise<void> {
  await asker(guard, policy, "input", key, model, requestId)(bodyTexts(body));
}

type Outcome = { unsafe: boolean; detail: string | null };

async function judgeVerdict(guard: GuardService, r: CompiledRule, text: string, prompt: string | undefined): Promise<Outcome> {
  if (!guard.judge) throw new JudgeFailed("this gateway cannot ask a judge");
  const v = await guard.judge.verdict(r.model!, text, r.timeoutMs!, false, prompt);
  const named = r.kinds.length === 0 ? v.categories : v.categories.filter((c) => r.kinds.includes(c));
  const unsafe = !v.safe && (r.kinds.length === 0 || named.length > 0);
  return { unsafe, detail: named.length ? `category ${named.join(",")}` : null };
}

async function serviceVerdict(r: CompiledRule, text: string): Promise<Outcome> {
  try {
    const v = await askService(r.service!, text, AbortSignal.timeout(r.timeoutMs!));
    return { unsafe: v.unsafe, detail: v.why };
  } catch (err) {
    const e = err as Error;
    throw new JudgeFailed(e.name === "TimeoutError" ? `the service did not answer within ${r.timeoutMs} ms` : `the service failed: ${e.message}`);
  }
}
