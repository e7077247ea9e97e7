// A gateway's lease on one key's limits: requests (and concurrency slots) reserved in Redis in one
// admission, then spent in this process without a round trip; with the key's tokens and spend as
// Redis last told them plus what this process counted since, to check tokens per minute and budgets
// against. A lease lasts at most LEASE_MS and never past its minute; what it did not use is given
// back (gateway/auth/limiter.ts). Rates and slots are reserved before they are used, so no number of
// gateways can admit past a rate or slot limit; a small limit gets leases of one request, which is
// a round trip per request, as exact as it was before leases.
import type { ScopeLimits } from "./limit-book.ts";

export const LEASE_MS = 1_000;
/** A lease is at most this share of the tightest request or slot limit... */
const LEASE_SHARE = 1 / 50;
/** ...and at most this many requests. */
export const MAX_LEASE = 256;
/** Leases of at least this many requests are renewed ahead, before they run out. */
const RENEW_AHEAD_FROM = 16;

/** How many requests to reserve at once for these limits: 1 for any limit under 100. */
export function leaseSize(limits: ScopeLimits[]): number {
  let n = MAX_LEASE;
  for (const l of limits) for (const v of [l.rpm, l.concurrent]) if (v !== null) n = Math.min(n, Math.floor(v * LEASE_SHARE));
  return Math.max(1, n);
}

/** Identifies a set of limits: a lease taken under other limits is not used. */
export const limitsSignature = (limits: ScopeLimits[]): string =>
  limits.map((l) => `${l.scope}:${l.scopeId}:${l.rpm}:${l.tpm}:${l.concurrent}:${l.monthlyBudgetMicros}:${l.monthlyBudgetGpuSeconds}`).join("|");

export class Lease {
  /** Reserved requests not yet admitted here. */
  private requests: number;
  /** Slots this lease holds in Redis that no request here holds. */
  private freeSlots: number;
  private retired = false;
  /** Some scope limits concurrency: each request admitted here holds one of the lease's slots. */
  readonly slotted: boolean;
  private readonly counted: boolean;
  private readonly granted: number;
  /** Set once this lease has asked for its successor: one try, whatever Redis answers. */
  private renewalAsked = false;

  constructor(
    readonly id: string,
    readonly signature: string,
    private readonly limits: ScopeLimits[],
    granted: number,
    readonly bucket: number,
    readonly until: number,
    /** Per scope, as the script listed them: tokens in the window, spend and GPU-seconds this month. */
    private readonly tokens: number[],
    private readonly spent: number[],
    private readonly gpuSpent: number[],
    /** Where in Redis its slots are, as the settle script reads it (limit-script.ts): one character per scope of the key. */
    readonly slotsAt: string,
  ) {
    this.slotted = limits.some((l) => l.concurrent !== null);
    this.counted = limits.some((l) => l.rpm !== null);
    this.granted = granted;
    this.requests = granted - 1; // the first is the request that asked
    this.freeSlots = this.slotted ? granted - 1 : 0;
  }

  /** Nobody asked with this lease (it was taken ahead): its first request and slot are free too. */
  unclaimed(): void {
    this.requests++;
    if (this.slotted) this.freeSlots++;
  }

  /**
   * True once, when the next lease should be taken while this one still admits: a quarter or less
   * of its requests, slots or time left. Once only, so a refused or failed renewal is not asked
   * again by every request the rest of this lease admits (the request that finds it spent asks).
   * Only a lease of RENEW_AHEAD_FROM or more: a small limit's leases are held to what it needs, as
   * exact as a round trip per request.
   */
  renewalDue(now: number): boolean {
    if (this.renewalAsked || this.granted < RENEW_AHEAD_FROM) return false;
    const quarter = this.granted / 4;
    const low = (this.counted && this.requests <= quarter) || (this.slotted && this.freeSlots <= quarter) || this.until - now <= LEASE_MS / 4;
    if (low) this.renewalAsked = true;
    return low;
  }

  /** Whether it can still admit at `now` (in minute `bucket`), at least as far as time goes. */
  live(now: number, bucket: number): boolean {
    return !this.retired && now < this.until && bucket === this.bucket;
  }

  /** Admits one request here (taking one of its free slots), or false: ask Redis. */
  take(now: number, bucket: number): boolean {
    if (!this.live(now, bucket) || this.requests < 1 || (this.slotted && this.freeSlots === 0)) return false;
    for (const [i, l] of this.limits.entries()) {
      if (l.tpm !== null && this.tokens[i]! + 1 > l.tpm) return false;
      if (l.monthlyBudgetMicros !== null && this.spent[i]! >= l.monthlyBudgetMicros) return false;
      if (l.monthlyBudgetGpuSeconds !== null && this.gpuSpent[i]! >= l.monthlyBudgetGpuSeconds) return false;
    }
    this.requests--;
    if (this.slotted) this.freeSlots--;
    return true;
  }

  /** A request admitted here ended while the lease still serves: its slot admits the next one. */
  slotBack(): void {
    this.freeSlots++;
  }

  /** What a finished request used, for the local view of tokens and spend. */
  used(tokens: number, cost: number, gpuSeconds: number): void {
    for (let i = 0; i < this.tokens.length; i++) {
      this.tokens[i]! += tokens;
      this.spent[i]! += cost;
      this.gpuSpent[i]! += gpuSeconds;
    }
  }

  /** Ends the lease: the requests it reserved and did not use, and its free slots, to give back. */
  retire(): { unused: number; slots: number } {
    this.retired = true;
    const out = { unused: this.counted ? this.requests : 0, slots: this.freeSlots };
    this.requests = 0;
    this.freeSlots = 0;
    return out;
  }
}
