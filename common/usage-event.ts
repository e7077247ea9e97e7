// One request's usage, as the gateway emits it and the usage worker writes it. The id is made
// once on the gateway, so the ledger write is keyed by it and a retried batch counts nothing twice.
import { z } from "zod";

export const USAGE_QUEUE = "llmgw-usage";

export const usageEvent = z.object({
  id: z.string(),
  at: z.string(),
  keyId: z.string().nullable(),
  projectId: z.string().nullable(),
  model: z.string(),
  version: z.string().nullable(),
  replicaId: z.string().nullable(),
  endpoint: z.string(),
  promptTokens: z.number().int().nonnegative(),
  cachedTokens: z.number().int().nonnegative(),
  completionTokens: z.number().int().nonnegative(),
  costMicros: z.number().int().nonnegative(),
  latencyMs: z.number().nonnegative(),
  ttftMs: z.number().nonnegative().nullable(),
  status: z.number().int(),
  /** The person whose own key made the request (null or absent: a project's key). */
  personId: z.string().nullable().optional(),
  /** GPU time the request cost (gateway/router/busy-clock.ts); absent: 0 (an outside provider, an older gateway). */
  gpuSeconds: z.number().nonnegative().optional(),
  /** The answer cache's outcome (docs/cache.md); absent: the project has no cache. A hit costs nothing. */
  cache: z.enum(["hit", "similar", "miss"]).optional(),
  /** The /v1/batches batch whose line this was (priced at its batch discount); absent: not a batch's. */
  batchId: z.string().nullable().optional(),
});
export type UsageEvent = z.infer<typeof usageEvent>;

export const usageBatch = z.object({ events: z.array(usageEvent) });

/**
 * How a batch that failed to write (the store away) is retried: doubling from half a second up to
 * a cap, so the ledger catches up soon after an outage of any length. Named, not BullMQ's
 * `exponential` (uncapped: its 20th retry would wait six days); the usage worker computes it.
 */
export const USAGE_BACKOFF = { type: "usage-capped", delay: 500 } as const;
export const USAGE_BACKOFF_MAX_MS = 30_000;
/** Enough capped retries for about eight hours of store outage before a batch waits in `failed`. */
export const USAGE_ATTEMPTS = 1000;

export function usageBackoffMs(attemptsMade: number): number {
  return Math.min(USAGE_BACKOFF.delay * 2 ** Math.max(0, attemptsMade - 1), USAGE_BACKOFF_MAX_MS);
}
