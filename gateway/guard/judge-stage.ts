// The judge rules of a request's input: the texts the model will read (after redaction) asked of
// each rule's judge model. Unsafe (in one of the rule's categories, when it names any) blocks with
// the category named, or is flagged; a judge that fails or runs out of time follows the policy's
// `fail`: open lets the request through (logged), closed answers 503 guard_failed.
import { log } from "../../common/logging.ts";
import type { KeyInfo } from "../auth/key-cache.ts";
import { ApiError } from "../errors.ts";
import { GuardBlock, type GuardDecision } from "./check.ts";
import { JudgeFailed } from "./judge.ts";
import type { MergedPolicy } from "./merge.ts";
import type { GuardService } from "./service.ts";

/** Every text of a request body in OpenAI's shapes (messages, prompt, input), in order. */
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
  return out.join("\n\n");
}

export async function judgeInput(guard: GuardService, policy: MergedPolicy, body: Record<string, unknown>, key: KeyInfo, model: string, requestId: string | undefined): Promise<void> {
  const rules = policy.input.filter((r) => r.detector === "judge");
  if (rules.length === 0) return;
  const text = bodyTexts(body);
  if (!text) return;
  const decisions: GuardDecision[] = [];
  for (const r of rules) {
    const started = performance.now();
    let outcome = "failed";
    try {
      if (!guard.judge) throw new JudgeFailed("this gateway cannot ask a judge");
      const v = await guard.judge.verdict(r.model!, text, r.timeoutMs!);
      outcome = v.safe ? "safe" : "unsafe";
      const named = r.kinds.length === 0 ? v.categories : v.categories.filter((c) => r.kinds.includes(c));
      if (v.safe || (r.kinds.length > 0 && named.length === 0)) continue;
      decisions.push({ policy: r.policy, rule: r.name, action: r.action === "block" ? "block" : "flag", direction: "input" });
      if (r.action === "block") {
        guard.record(decisions, key, model);
        throw new GuardBlock(decisions, named.length ? `category ${named.join(",")}` : undefined);
      }
    } catch (err) {
      if (!(err instanceof JudgeFailed)) throw err;
      log.warn("a guardrail judge failed", { requestId, policy: r.policy, rule: r.name, judge: r.model, fail: policy.fail, error: err.message });
      if (policy.fail === "closed") throw new ApiError("unavailable", `the guardrail judge '${r.name}' did not answer and this policy fails closed; try again`, { code: "guard_failed", retryAfterS: 1 });
    } finally {
      guard.judgeSeconds.observe({ model: r.model!, outcome }, (performance.now() - started) / 1000);
    }
  }
  guard.record(decisions, key, model);
}
