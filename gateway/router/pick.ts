// Chooses the replica for a request by its routing profile. Replicas whose breaker is open, and
// those tried already for this request, are passed over. Runs on every request: one pass over the
// candidates, no allocation; ties are broken in turn so equal replicas share the load, or by weight
// where endpoints carry one (outside keys), and load counts against an endpoint's weight.
import type { Affinity } from "./affinity.ts";
import type { Endpoint } from "./endpoint.ts";

export const PROFILES = ["chat", "batch", "long-context"] as const;
export type Profile = (typeof PROFILES)[number];

export interface RouteHints {
  /** chat: affinity, then the soonest answer; batch: the shortest queue; long-context: the most free KV cache. */
  profile: Profile;
  /** x-llmgw-session or the body's `user`: its requests go where the last one went. */
  session: string | null;
  /** Hash of the prompt's beginning (affinity.ts), 0 for none. */
  prefix: number;
}

export const DEFAULT_HINTS: RouteHints = { profile: "chat", session: null, prefix: 0 };

/** Engine metrics older than this are not trusted (the scrape runs every second). */
export const STALE_MS = 3_000;

/** chat: TTFTs up to fastest × TOLERANCE + SLACK are taken as equal. */
export const TTFT_TOLERANCE = 1.25;
export const TTFT_SLACK_MS = 5;

let turn = 0;

export function pick(candidates: readonly Endpoint[], exclude: ReadonlySet<string>, hints: RouteHints = DEFAULT_HINTS, affinity: Affinity | null = null, now = Date.now()): Endpoint | null {
  const n = candidates.length;
  if (n === 0) return null;
  const sticky = stickyOf(candidates, exclude, hints, affinity, now);
  if (sticky) return sticky;
  const fastEnough = fastEnoughOf(candidates, hints, now);
  let best: Endpoint | null = null;
  let bestScore = Infinity;
  let tieWeight = 0;
  const weighted = candidates[0]!.group.weighted;
  const start = turn++ % n;
  for (let i = 0; i < n; i++) {
    const e = candidates[(start + i) % n]!;
    if (!usable(e, exclude, now)) continue;
    const score = scoreOf(e, hints, fastEnough, now);
    if (score < bestScore) {
      best = e;
      bestScore = score;
      tieWeight = e.weight;
    } else if (weighted && score === bestScore) {
      // One pass, weighted: each tied endpoint ends up chosen with its share of the tied weight.
      tieWeight += e.weight;
      if (Math.random() * tieWeight < e.weight) best = e;
    }
  }
  return best;
}

/** chat: the replica that served this session or prompt beginning last, while it is usable and not full. */
export function stickyOf(candidates: readonly Endpoint[], exclude: ReadonlySet<string>, hints: RouteHints, affinity: Affinity | null, now: number): Endpoint | null {
  if (hints.profile !== "chat" || !affinity) return null;
  const sticky = (hints.session !== null ? affinity.session(hints.session) : undefined) ?? (hints.prefix !== 0 ? affinity.prefix(hints.prefix) : undefined);
  if (sticky === undefined) return null;
  for (let i = 0; i < candidates.length; i++) {
    const e = candidates[i]!;
    if (e.id === sticky && usable(e, exclude, now) && !crowded(e, now)) return e;
  }
  return null;
}

/**
 * chat: TTFTs within noise of the fastest count as equal (else one replica a hair faster would
 * take every request and the others' estimates would never be refreshed); a replica with no
 * estimate yet counts as fast, so it gets tried. 0 for the other profiles.
 */
export function fastEnoughOf(candidates: readonly Endpoint[], hints: RouteHints, now: number): number {
  let fastest = 0;
  if (hints.profile === "chat") {
    for (let i = 0; i < candidates.length; i++) {
      const t = candidates[i]!.ttft.get(now);
      if (t > 0 && (fastest === 0 || t < fastest)) fastest = t;
    }
  }
  return fastest * TTFT_TOLERANCE + TTFT_SLACK_MS;
}

/** Lower is better. batch: the queue; long-context: KV cache in use, then the queue; chat: expected wait. */
export function scoreOf(e: Endpoint, hints: RouteHints, fastEnough: number, now: number): number {
  const queue = (e.inflight + waitingOf(e, now)) / e.weight;
  if (hints.profile === "batch") return queue;
  if (hints.profile === "long-context") return kvUsageOf(e, now) * 1e6 + queue;
  return (queue + 1) * Math.max(e.ttft.get(now), fastEnough);
}

export function usable(e: Endpoint, exclude: ReadonlySet<string>, now: number): boolean {
  return e.breaker.allows(now) && !exclude.has(e.id);
}

/** Affinity gives way when the replica is full: a warm cache is not worth waiting in its queue. */
export function crowded(e: Endpoint, now: number): boolean {
  return e.inflight >= e.slots || waitingOf(e, now) > 0;
}

export function waitingOf(e: Endpoint, now: number): number {
  return now - e.scrapedAt <= STALE_MS ? e.waiting : 0;
}

export function kvUsageOf(e: Endpoint, now: number): number {
  return now - e.scrapedAt <= STALE_MS ? e.kvCacheUsage : 0;
}
