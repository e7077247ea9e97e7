// The client's 429 for a limit that refused a request. A spent budget, in money or in GPU-hours, is
// the same error (code budget_exceeded, no Retry-After) and also news for the operators: it raises
// budget_spent.
import { raise } from "../../common/notifier.ts";
import { ApiError } from "../errors.ts";
import type { ScopeLimits } from "./limit-book.ts";
import type { Refusal } from "./local-limits.ts";

const WHAT: Record<Refusal["reason"], string> = {
  rpm: "requests per minute",
  tpm: "tokens per minute",
  concurrent: "concurrent requests",
  budget: "monthly budget",
  gpu_budget: "monthly GPU budget",
};

export function refusedError(r: Refusal, l: ScopeLimits): ApiError {
  const budget = r.reason === "budget" || r.reason === "gpu_budget";
  if (budget) budgetSpent(l, r.reason === "gpu_budget");
  const message = budget ? `the ${l.scope}'s ${WHAT[r.reason]} is spent; it resets at the start of next month` : `rate limit reached: the ${l.scope}'s ${WHAT[r.reason]} limit`;
  return new ApiError("rate_limit", message, {
    code: budget ? "budget_exceeded" : "rate_limit_exceeded",
    retryAfterS: r.retryMs === null ? undefined : Math.max(1, Math.ceil(r.retryMs / 1000)),
  });
}

/** Noticed on every request the budget refuses; raise drops the repeats within the hour. */
function budgetSpent(l: ScopeLimits, gpu: boolean): void {
  const what = gpu ? `GPU budget (${((l.monthlyBudgetGpuSeconds ?? 0) / 3600).toFixed(2)} GPU-hours)` : `budget (${((l.monthlyBudgetMicros ?? 0) / 1e6).toFixed(2)})`;
  raise({
    kind: "budget_spent",
    subject: `${l.scope}/${l.scopeId}`,
    summary: `the monthly ${what} of ${l.scope} ${l.scopeId} is spent; its requests are refused until next month`,
    details: { scope: l.scope, scopeId: l.scopeId, monthlyBudgetMicros: l.monthlyBudgetMicros, monthlyBudgetGpuSeconds: l.monthlyBudgetGpuSeconds },
  });
}
