// Chooses the replica for a request: the fewest requests in flight from this gateway, ties broken
// in turn so equal replicas share the load. Replicas that failed just now are passed over.
import type { Endpoint } from "./registry.ts";

let turn = 0;

export function pick(candidates: Endpoint[], exclude: ReadonlySet<string>, now = Date.now()): Endpoint | null {
  let best: Endpoint | null = null;
  const n = candidates.length;
  const start = turn++ % Math.max(n, 1);
  for (let i = 0; i < n; i++) {
    const e = candidates[(start + i) % n]!;
    if (exclude.has(e.id) || e.skipUntil > now) continue;
    if (!best || e.inflight < best.inflight) best = e;
  }
  return best;
}

const FAILURES_BEFORE_SKIP = 3;
const SKIP_MS = 5_000;

export function recordFailure(e: Endpoint, now = Date.now()): void {
  e.failures += 1;
  if (e.failures >= FAILURES_BEFORE_SKIP) e.skipUntil = now + SKIP_MS;
}

export function recordSuccess(e: Endpoint): void {
  e.failures = 0;
  e.skipUntil = 0;
}
