// Tells every gateway, over the Redis change feed, that a replica may take traffic or is gone.
import { publishChange, WEIGHTS_KEY } from "../common/change-feed.ts";
import type { ReplicaRef } from "../workflows/model-types.ts";
import type { ActivityDeps } from "./deps.ts";

/** `gpus`: how many the replica holds, told with "ready" so gateways can charge its GPU-seconds. */
export async function announce(deps: ActivityDeps, op: "ready" | "draining" | "gone", replica: ReplicaRef, gpus?: number): Promise<void> {
  await publishChange(deps.redis, {
    kind: "replica",
    op,
    replica: { id: replica.id, model: replica.model, version: replica.version, nodeId: replica.nodeId, url: replica.url, ...(gpus !== undefined && { gpus }) },
  });
}

/** Sets (or with null clears) the share of traffic per version; kept in Redis for gateways that start later. */
export async function setWeights(deps: ActivityDeps, model: string, weights: Record<string, number> | null): Promise<void> {
  if (weights) await deps.redis.hset(WEIGHTS_KEY, model, JSON.stringify(weights));
  else await deps.redis.hdel(WEIGHTS_KEY, model);
  await publishChange(deps.redis, { kind: "weights", model, weights });
}
