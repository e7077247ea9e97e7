// Tells every gateway, over the Redis change feed, that a replica may take traffic or is gone.
import { publishChange } from "../common/change-feed.ts";
import type { ReplicaRef } from "../workflows/model-types.ts";
import type { ActivityDeps } from "./deps.ts";

export async function announce(deps: ActivityDeps, op: "ready" | "draining" | "gone", replica: ReplicaRef): Promise<void> {
  await publishChange(deps.redis, {
    kind: "replica",
    op,
    replica: { id: replica.id, model: replica.model, version: replica.version, nodeId: replica.nodeId, url: replica.url },
  });
}
