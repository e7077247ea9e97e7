// The judge and outside-service rules of a request's input: the texts the model will read (after
// redaction) asked of each rule's judge model or service. Unsafe (for a judge, in one of the rule's
// categories when it names any) blocks naming the category or the service's reason, or is flagged;
// one that fails or runs out of time follows the policy's `fail`: open lets the request through
// (logged), closed answers 503 guard_failed.
import { log } from "../../common/logging.ts";
import type { KeyInfo } from "../auth/key-cache.ts";
import { ApiError } from "../errors.ts";
import { GuardBlock, type GuardDecision } from "./check.ts";
import { JudgeFailed } from "./judge.ts";
import type { CompiledRule, MergedPolicy } from "./merge.ts";
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

export async function judgeInput(guard: GuardService, policy: MergedPolicy, body: Record<string, unknown>, key: KeyInfo, model: string, requestId: string | undefined): Promise<void> {
  const rules = policy.input.filter((r) => r.detector === "judge" || r.detector === "service");
  if (rules.length === 0) return;
  const text = bodyTexts(body);
  if (!text) return;
  const decisions: GuardDecision[] = [];
  for (const r of rules) {
    const started = performance.now();
    let outcome = "failed";
    try {
      const v = await (r.service ? serviceVerdict(r, text) : judgeVerdict(guard, r, text));
      outcome = v.unsafe ? "unsafe" : "safe";
      if (!v.unsafe) continue;
      decisions.push({ policy: r.policy, rule: r.name, action: r.action === "block" ? "block" : "flag", direction: "input" });
      if (r.action === "block") {
        guard.record(decisions, key, model);
        throw new GuardBlock(decisions, v.detail ?? undefined);
      }
    } catch (err) {
      if (!(err instanceof JudgeFailed)) throw err;
      const what = r.service ? "service" : "judge";
      log.warn(`a guardrail ${what} failed`, { requestId, policy: r.policy, rule: r.name, fail: policy.fail, error: err.message });
      if (policy.fail === "closed") throw new ApiError("unavailable", `the guardrail ${what} '${r.name}' did not answer and this policy fails closed; try again`, { code: "guard_failed", retryAfterS: 1 });
    } finally {
      if (r.model) guard.judgeSeconds.observe({ model: r.model, outcome }, (performance.now() - started) / 1000);
    }
  }
  guard.record(decisions, key, model);
}

type Outcome = { unsafe: boolean; detail: string | null };

async function judgeVerdict(guard: GuardService, r: CompiledRule, text: string): Promise<Outcome> {
  if (!guard.judge) throw new JudgeFailed("this gateway cannot ask a judge");
  const v = await guard.judge.verdict(r.model!, text, r.timeoutMs!);
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
