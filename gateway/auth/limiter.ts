// Admission against rate limits, concurrency and monthly budgets at every level of tenancy. One
// Redis round trip admits (a Lua script), one after the answer settles (frees the slot, counts
// tokens and cost). If Redis cannot answer, this process counts on its own (LocalLimits) and says
// so in a log line and a metric: a Redis outage never fails a request.
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { Counter, type Registry } from "prom-client";
import { log } from "../../common/logging.ts";
import { ApiError } from "../client-api/errors.ts";
import type { KeyInfo } from "./key-cache.ts";
import { scopesOf, type LimitBook, type ScopeLimits } from "./limit-book.ts";
import { ADMIT_LUA, SETTLE_LUA } from "./limit-script.ts";
import { LocalLimits, type Refusal } from "./local-limits.ts";

const WINDOW_MS = 60_000;
/** A concurrency slot lapses after this even if never released (its gateway died). */
const SLOT_TTL_MS = 15 * 60_000;
const WARN_EVERY_MS = 10_000;

export interface Admission {
  /** The 429 to answer with, or null when admitted. */
  refused: ApiError | null;
  /** Frees the concurrency slot and counts what the request used; call exactly once. */
  release(spent: { promptTokens: number; completionTokens: number; costMicros: number }): void;
}

type LimiterRedis = Redis & {
  llmgwAdmit(n: number, ...args: (string | number)[]): Promise<(number | string)[]>;
  llmgwSettle(n: number, ...args: (string | number)[]): Promise<number>;
};

const prefixOf = (s: { scope: string; scopeId: string }) => `llmgw:lim:${s.scope}:${s.scopeId}`;
const monthOf = (now: number) => new Date(now).toISOString().slice(0, 7);

export class Limiter {
  private readonly redis: LimiterRedis;
  private readonly local = new LocalLimits(WINDOW_MS);
  private readonly fallbacks: Counter;
  private lastWarn = 0;

  /** `redis` should fail fast when disconnected (no offline queue, a short command timeout). */
  constructor(redis: Redis, private readonly book: LimitBook, metrics: Registry) {
    redis.defineCommand("llmgwAdmit", { lua: ADMIT_LUA });
    redis.defineCommand("llmgwSettle", { lua: SETTLE_LUA });
    this.redis = redis as LimiterRedis;
    this.fallbacks = new Counter({
      name: "llmgw_limits_local_fallback_total",
      help: "Limit checks counted in this process only because Redis did not answer",
      labelNames: ["op"],
      registers: [metrics],
    });
  }

  async admit(key: KeyInfo): Promise<Admission> {
    const limits = this.book.forKey(key);
    const all = scopesOf(key).map(prefixOf);
    // No limits: only the spend is counted, so a budget set later this month sees it.
    if (limits.length === 0) return { refused: null, release: (spent) => this.settle(all, "-", { promptTokens: 0, completionTokens: 0, costMicros: spent.costMicros }) };
    const id = randomUUID();
    const prefixes = limits.map(prefixOf);
    const now = Date.now();
    const month = monthOf(now);
    let refusal: Refusal | null;
    let local = false;
    try {
      const args = limits.flatMap((l) => [l.rpm ?? -1, l.tpm ?? -1, l.concurrent ?? -1, l.monthlyBudgetMicros ?? -1]);
      const r = await this.redis.llmgwAdmit(prefixes.length, ...prefixes, now, WINDOW_MS, id, SLOT_TTL_MS, month, ...args);
      refusal = r[0] === 1 ? null : { index: Number(r[1]), reason: String(r[2]) as Refusal["reason"], retryMs: Number(r[3]) < 0 ? null : Number(r[3]) };
    } catch (err) {
      this.fellBack("admit", err);
      refusal = this.local.admit(prefixes, limits, id, now, SLOT_TTL_MS, month);
      local = true;
    }
    if (refusal) return { refused: toError(refusal, limits[refusal.index - 1]!), release: () => undefined };
    return {
      refused: null,
      release: (spent) => {
        if (local) this.local.settle(prefixes, id, Date.now(), 0, 0, month);
        this.settle(all, id, spent);
      },
    };
  }

  private settle(prefixes: string[], id: string, spent: { promptTokens: number; completionTokens: number; costMicros: number }): void {
    const now = Date.now();
    const tokens = spent.promptTokens + spent.completionTokens;
    // Nothing to free and nothing to count: no round trip.
    if (id === "-" && tokens === 0 && spent.costMicros === 0) return;
    this.redis.llmgwSettle(prefixes.length, ...prefixes, now, WINDOW_MS, id, tokens, spent.costMicros, monthOf(now)).catch((err: unknown) => {
      this.fellBack("settle", err);
      this.local.settle(prefixes, id, now, tokens, spent.costMicros, monthOf(now));
    });
  }

  private fellBack(op: string, err: unknown): void {
    this.fallbacks.inc({ op });
    if (Date.now() - this.lastWarn < WARN_EVERY_MS) return;
    this.lastWarn = Date.now();
    log.warn("Redis did not answer a limit check; counting limits in this process only", { op, error: (err as Error).message });
  }
}

const WHAT: Record<Refusal["reason"], string> = {
  rpm: "requests per minute",
  tpm: "tokens per minute",
  concurrent: "concurrent requests",
  budget: "monthly budget",
};

function toError(r: Refusal, l: ScopeLimits): ApiError {
  const message =
    r.reason === "budget"
      ? `the ${l.scope}'s monthly budget is spent; it resets at the start of next month`
      : `rate limit reached: the ${l.scope}'s ${WHAT[r.reason]} limit`;
  return new ApiError("rate_limit", message, {
    code: r.reason === "budget" ? "budget_exceeded" : "rate_limit_exceeded",
    retryAfterS: r.retryMs === null ? undefined : Math.max(1, Math.ceil(r.retryMs / 1000)),
  });
}
