// Admission against rate limits, concurrency and monthly budgets at every level of tenancy, shared
// by every gateway through Redis. A request that finds a live lease for its key is admitted here
// with no round trip (gateway/auth/limit-lease.ts); otherwise one round trip (a Lua script) admits
// it and takes a new lease, together with this key's unsent settlements. A large lease running low
// is renewed in the background (renewAhead), so its key's requests do not wait on Redis. What requests used
// (tokens, cost, freed slots, unused leases) is sent in the background every FLUSH_MS. If Redis
// cannot answer, this process counts on its own (LocalLimits) and says so in a log line and a
// metric: a Redis outage never fails a request.
import { randomUUID } from "node:crypto";
import type { ChainableCommander, Redis } from "ioredis";
import { Counter, type Registry } from "prom-client";
import { log } from "../../common/logging.ts";
import type { ApiError } from "../errors.ts";
import type { KeyInfo } from "./key-cache.ts";
import { scopesOf, type LimitBook, type ScopeLimits } from "./limit-book.ts";
import { Lease, LEASE_MS, leaseSize, limitsSignature } from "./limit-lease.ts";
import { ADMIT_LUA, SETTLE_LUA } from "./limit-script.ts";
import { refusedError } from "./limit-refusal.ts";
import { LocalLimits, type Refusal } from "./local-limits.ts";
import { limitPrefix, spendMonth } from "../../common/job-spend.ts";

const WINDOW_MS = 60_000;
/** A concurrency slot lapses after this even if never released (its gateway died). */
const SLOT_TTL_MS = 15 * 60_000;
const WARN_EVERY_MS = 10_000;
/** How often what requests used is sent to Redis, and leases past their time given back. */
const FLUSH_MS = 100;

/** What a finished request used: tokens, money and (on our replicas) GPU-seconds. */
export type Spent = { promptTokens: number; completionTokens: number; costMicros: number; gpuSeconds?: number };

/**
 * What the limiter decides for one request (named apart from the router's Admission, which queues
 * requests by band for a model's replicas): refused with a 429, or let through with a release.
 */
export interface LimitDecision {
  /** The 429 to answer with, or null when admitted. */
  refused: ApiError | null;
  /** Frees the concurrency slot and counts what the request used; call exactly once. */
  release(spent: Spent): void;
}

/** One key's settlements not yet in Redis. */
interface Pending {
  prefixes: string[];
  tokens: number;
  cost: number;
  gpu: number;
  /** Leased requests not used: [minute bucket, count]. */
  unused: [number, number][];
  /** Slots to free, by the lease that holds them, and where they are (Lease.slotsAt). */
  slots: Map<string, { count: number; at: string }>;
}

interface Plan {
  version: number | undefined;
  limits: ScopeLimits[];
  all: string[];
  k: string;
  signature: string;
}

type LimiterRedis = Redis & {
  llmgwAdmit(n: number, ...args: (string | number)[]): Promise<(number | string)[]>;
  llmgwSettle(n: number, ...args: (string | number)[]): Promise<number>;
};
type LimiterPipeline = ChainableCommander & {
  llmgwAdmit(n: number, ...args: (string | number)[]): LimiterPipeline;
  llmgwSettle(n: number, ...args: (string | number)[]): LimiterPipeline;
};

const prefixOf = (s: { scope: string; scopeId: string }) => limitPrefix(s.scope, s.scopeId);
const monthOf = spendMonth;
const bucketOf = (now: number) => Math.floor(now / WINDOW_MS);
const NONE: LimitDecision["release"] = () => undefined;

export class Limiter {
  private readonly redis: LimiterRedis;
  private readonly local = new LocalLimits(WINDOW_MS);
  private readonly fallbacks: Counter;
  private readonly roundTrips: Counter;
  private lastWarn = 0;
  /** By key: its live lease, the admission now asking Redis for one, what it used not yet sent. */
  private readonly leases = new Map<string, Lease>();
  private readonly asking = new Map<string, { want: number; done: Promise<unknown> }>();
  private readonly pending = new Map<string, Pending>();
  private readonly timer: NodeJS.Timeout;
  /** Keyed by the key cache's entry: a key looked up again (after its TTL) is planned again. */
  private readonly plans = new WeakMap<KeyInfo, Plan>();

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
    this.roundTrips = new Counter({
      name: "llmgw_limits_redis_admissions_total",
      help: "Admissions that asked Redis (the rest were admitted on a lease, with no round trip)",
      registers: [metrics],
    });
    this.timer = setInterval(() => this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  async admit(key: KeyInfo): Promise<LimitDecision> {
    const { limits, all, k, signature } = this.planFor(key);
    // No limits: only the spend is counted, so a budget set later this month sees it.
    if (limits.length === 0) return { refused: null, release: (spent) => this.count(k, all, spent) };
    for (;;) {
      const now = Date.now();
      const lease = this.leases.get(k);
      if (lease?.signature === signature && lease.take(now, bucketOf(now))) {
        if (!this.asking.has(k) && lease.renewalDue(now)) this.renewAhead(k, limits, signature, leaseSize(limits));
        return this.admitted(k, all, lease);
      }
      // Another request is asking Redis for a lease of several: wait for it rather than ask too.
      const asking = this.asking.get(k);
      if (!asking || asking.want === 1) break;
      await asking.done.catch(() => undefined);
    }
    const want = leaseSize(limits);
    const done = this.ask(k, all, limits, signature, want);
    const entry = { want, done };
    this.asking.set(k, entry);
    done.finally(() => this.asking.get(k) === entry && this.asking.delete(k)).catch(() => undefined); // the caller sees any failure
    return done;
  }

  /** A key's limits and Redis prefixes, worked out once per key until the limit book changes. */
  private planFor(key: KeyInfo): Plan {
    const version = this.book.version;
    let plan = this.plans.get(key);
    if (!plan || plan.version !== version) {
      const limits = this.book.forKey(key);
      const all = scopesOf(key).map(prefixOf);
      plan = { version, limits, all, k: all.join(" "), signature: limitsSignature(limits) };
      this.plans.set(key, plan);
    }
    return plan;
  }

  /** Stops the timer and sends what is left. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    for (const [k, lease] of this.leases) this.retire(k, lease);
    this.leases.clear();
    await this.flush();
  }

  private async ask(k: string, all: string[], limits: ScopeLimits[], signature: string, want: number): Promise<LimitDecision> {
    const old = this.leases.get(k);
    if (old) this.retire(k, old);
    this.leases.delete(k);
    const id = randomUUID();
    const prefixes = limits.map(prefixOf);
    const now = Date.now();
    const month = monthOf(now);
    let r: (number | string)[];
    try {
      r = await this.reserve(k, prefixes, limits, id, now, want);
    } catch (err) {
      this.fellBack("admit", err);
      const refusal = this.local.admit(prefixes, limits, id, now, SLOT_TTL_MS, month);
      if (refusal) return { refused: refusedError(refusal, limits[refusal.index - 1]!), release: NONE };
      return {
        refused: null,
        release: (spent) => {
          this.local.settle(prefixes, id, Date.now(), 0, 0, month, 0);
          this.count(k, all, spent);
        },
      };
    }
    if (r[0] !== 1) {
      const refusal: Refusal = { index: Number(r[1]), reason: String(r[2]) as Refusal["reason"], retryMs: Number(r[3]) < 0 ? null : Number(r[3]) };
      return { refused: refusedError(refusal, limits[refusal.index - 1]!), release: NONE };
    }
    const lease = this.install(k, id, signature, limits, now, r);
    return this.admitted(k, all, lease);
  }

  /**
   * Takes the next lease while the current one still admits, so that no request waits on Redis for
   * it. A refusal or an unreachable Redis changes nothing here: the request that finds the current
   * lease spent asks for itself, and gets the exact answer.
   */
  private renewAhead(k: string, limits: ScopeLimits[], signature: string, want: number): void {
    const id = randomUUID();
    const now = Date.now();
    const done = this.reserve(k, limits.map(prefixOf), limits, id, now, want).then(
      (r) => {
        if (r[0] === 1) this.install(k, id, signature, limits, now, r).unclaimed();
      },
      // Not a fallback yet: the request that finds the lease spent asks, and falls back itself.
      (err: unknown) => log.debug("could not renew a limit lease ahead", { error: (err as Error).message }),
    );
    const entry = { want, done };
    this.asking.set(k, entry);
    void done.finally(() => this.asking.get(k) === entry && this.asking.delete(k));
  }

  /**
   * One admission round trip: this key's settlements first (so the admission sees them), then the
   * admit script. Throws when Redis did not answer the admission; the settlements it did not take
   * are counted here by then.
   */
  private async reserve(k: string, prefixes: string[], limits: ScopeLimits[], id: string, now: number, want: number): Promise<(number | string)[]> {
    const pend = this.pending.get(k);
    this.pending.delete(k);
    this.roundTrips.inc();
    // Set once the pending settlements are accounted for (sent, or counted here), so never twice.
    let settledPend = !pend;
    try {
      const pipe = this.redis.pipeline() as LimiterPipeline;
      if (pend) for (const args of settleCalls(pend, now)) pipe.llmgwSettle(pend.prefixes.length, ...args);
      const limitArgs = limits.flatMap((l) => [l.rpm ?? -1, l.tpm ?? -1, l.concurrent ?? -1, l.monthlyBudgetMicros ?? -1, l.monthlyBudgetGpuSeconds ?? -1]);
      pipe.llmgwAdmit(prefixes.length, ...prefixes, now, WINDOW_MS, id, SLOT_TTL_MS, monthOf(now), want, ...limitArgs);
      const results = (await pipe.exec()) ?? [];
      if (pend && results.length > 1) {
        const failed = results.slice(0, -1).find(([err]) => err);
        if (failed) this.settleLocally(pend, failed[0]);
        settledPend = true;
      }
      const [err, answer] = results[results.length - 1] ?? [new Error("no answer from Redis")];
      if (err) throw err;
      return answer as (number | string)[];
    } catch (err) {
      if (!settledPend) this.settleLocally(pend!, null);
      throw err;
    }
  }

  /** Makes an admitted answer this key's lease; the lease it replaces gives back what it did not use. */
  private install(k: string, id: string, signature: string, limits: ScopeLimits[], now: number, r: (number | string)[]): Lease {
    const views = r.slice(2).map(Number);
    const lease = new Lease(
      id,
      signature,
      limits,
      Number(r[1]),
      bucketOf(now),
      now + LEASE_MS,
      views.filter((_, i) => i % 3 === 0),
      views.filter((_, i) => i % 3 === 1),
      views.filter((_, i) => i % 3 === 2),
      slotsAt(k.split(" "), limits, Number(r[1])),
    );
    // A request admitted meanwhile on another new lease: the later one serves, the other goes back.
    const raced = this.leases.get(k);
    if (raced) this.retire(k, raced);
    this.leases.set(k, lease);
    return lease;
  }

  private admitted(k: string, all: string[], lease: Lease): LimitDecision {
    return {
      refused: null,
      release: (spent) => {
        const now = Date.now();
        lease.used(spent.promptTokens + spent.completionTokens, spent.costMicros, spent.gpuSeconds ?? 0);
        if (lease.slotted) {
          if (this.leases.get(k) === lease && lease.live(now, bucketOf(now))) lease.slotBack();
          else this.freeLater(k, all, lease, 1);
        }
        this.count(k, all, spent);
      },
    };
  }

  private count(k: string, all: string[], spent: Spent): void {
    const tokens = spent.promptTokens + spent.completionTokens;
    const gpu = spent.gpuSeconds ?? 0;
    if (tokens === 0 && spent.costMicros === 0 && gpu === 0) return;
    const p = this.pendingFor(k, all);
    p.tokens += tokens;
    p.cost += spent.costMicros;
    p.gpu += gpu;
  }

  private pendingFor(k: string, prefixes: string[]): Pending {
    let p = this.pending.get(k);
    if (!p) this.pending.set(k, (p = { prefixes, tokens: 0, cost: 0, gpu: 0, unused: [], slots: new Map() }));
    return p;
  }

  private freeLater(k: string, prefixes: string[], lease: Lease, slots: number): void {
    const p = this.pendingFor(k, prefixes);
    const freeing = p.slots.get(lease.id);
    if (freeing) freeing.count += slots;
    else p.slots.set(lease.id, { count: slots, at: lease.slotsAt });
  }

  private retire(k: string, lease: Lease): void {
    const back = lease.retire();
    if (back.unused > 0) this.pendingFor(k, k.split(" ")).unused.push([lease.bucket, back.unused]);
    if (back.slots > 0) this.freeLater(k, k.split(" "), lease, back.slots);
  }

  /** Gives back leases past their time and sends every key's settlements, in one round trip. */
  private flush(): Promise<void> {
    const now = Date.now();
    for (const [k, lease] of this.leases) {
      if (lease.live(now, bucketOf(now))) continue;
      this.retire(k, lease);
      this.leases.delete(k);
    }
    if (this.pending.size === 0) return Promise.resolve();
    const batch = [...this.pending.values()].map((p) => ({ p, calls: settleCalls(p, now) }));
    this.pending.clear();
    const pipe = this.redis.pipeline() as LimiterPipeline;
    for (const { p, calls } of batch) for (const args of calls) pipe.llmgwSettle(p.prefixes.length, ...args);
    return pipe.exec().then(
      (results) => {
        // Results line up with the calls, one Pending's calls after another's.
        let i = 0;
        for (const { p, calls } of batch) {
          const failed = (results ?? []).slice(i, i + calls.length).find(([err]) => err);
          if (failed || !results) this.settleLocally(p, failed?.[0] ?? null);
          i += calls.length;
        }
      },
      (err: unknown) => batch.forEach(({ p }) => this.settleLocally(p, err)),
    );
  }

  /** Redis did not take these settlements: count tokens and spend here (its slots lapse there). */
  private settleLocally(p: Pending, err: unknown): void {
    this.fellBack("settle", err);
    const now = Date.now();
    this.local.settle(p.prefixes, "-", now, p.tokens, p.cost, monthOf(now), p.gpu);
  }

  private fellBack(op: string, err: unknown): void {
    this.fallbacks.inc({ op });
    if (Date.now() - this.lastWarn < WARN_EVERY_MS) return;
    this.lastWarn = Date.now();
    log.warn("Redis did not answer a limit check; counting limits in this process only", { op, error: (err as Error | null)?.message });
  }
}

/**
 * Per scope of the key (`all`, the settle script's KEYS), where a lease granted `granted` slots holds
 * them: '0' nowhere (the scope limits no concurrency), '1' its only slot, '2' more (limit-script.ts).
 */
function slotsAt(all: string[], limits: ScopeLimits[], granted: number): string {
  const held = granted > 1 ? "2" : "1";
  return all.map((prefix) => (limits.some((l) => l.concurrent !== null && prefixOf(l) === prefix) ? held : "0")).join("");
}

/** The settle script's ARGV for one key: one call, plus one more per extra minute with unused requests. */
function settleCalls(p: Pending, now: number): (string | number)[][] {
  const month = monthOf(now);
  const [first, ...more] = p.unused.length ? p.unused : [[0, 0] as [number, number]];
  return [
    [...p.prefixes, now, WINDOW_MS, p.tokens, p.cost, month, first![0], first![1], p.gpu, ...[...p.slots].flatMap(([id, s]) => [id, s.count, s.at])],
    ...more.map(([bucket, n]) => [...p.prefixes, now, WINDOW_MS, 0, 0, month, bucket, n, 0]),
  ];
}
