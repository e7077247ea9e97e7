// Steps shared by the workflows that add and remove replicas: start and bring up (ready, smoke
// test, into the router), and retire (out of the router, in-flight requests finish, stop).
import { CancellationScope, patched, proxyActivities, uuid4 } from "@temporalio/workflow";
import type { Activities } from "../activities/index.ts";
import { ENGINE_WAIT, QUICK } from "./activity-options.ts";
import type { FetchProgressReport, ReplicaRef } from "./model-types.ts";
import { weightsFor } from "./fetch-steps.ts";

export const quick = proxyActivities<Activities>(QUICK);

const waiting = proxyActivities<Activities>(ENGINE_WAIT);

export interface VersionSpec {
  model: string;
  version: string;
  versionId: string;
  engine: string;
  args: string[];
}

/** Wait for an engine to load, send it one real request, then let the router use it. */
export async function bringUp(replica: ReplicaRef): Promise<void> {
  await waiting.bringUpReplica({ replica });
}

/**
 * Places and starts `count` replicas of a version and brings each up. Every replica is pushed to
 * `started` before its start is asked for, so the caller can undo even a start that timed out.
 */
export async function addReplicas(
  spec: VersionSpec,
  count: number,
  started: ReplicaRef[],
  on: { fetch?: (p: FetchProgressReport) => void; started?: (r: ReplicaRef) => void; ready?: (r: ReplicaRef) => void } = {},
  avoid: string[] = [],
): Promise<void> {
  if (count <= 0) return;
  // Ids first: placement reserves the GPUs under them, and a retried placement returns the same.
  const replicaIds = Array.from({ length: count }, () => `${spec.model}-${uuid4().slice(0, 8)}`);
  const places = await quick.placeReplicas({ model: spec.model, version: spec.version, versionId: spec.versionId, replicaIds, avoid });
  // Placed rows are undone like started ones.
  for (const pl of places) started.push({ id: pl.replicaId, model: spec.model, version: spec.version, nodeId: pl.nodeId, url: "" });
  // A run that began before weights were fetched replays as it ran then (no fetch step).
  const weights = patched("fetch-weights") ? weightsFor(spec.versionId, on.fetch) : null;
  await Promise.all(
    places.map(async (pl) => {
      const replica = await quick.startReplica({ replicaId: pl.replicaId, ...spec, nodeId: pl.nodeId, gpus: pl.gpus, weights: await weights?.(pl.nodeId, pl.replicaId) });
      on.started?.(replica);
      await bringUp(replica);
      on.ready?.(replica);
    }),
  );
}

/** Out of the router first; requests already running finish (up to a grace); then stopped. */
export async function retire(replicas: ReplicaRef[]): Promise<void> {
  await Promise.all(
    replicas.map(async (replica) => {
      await waiting.drainReplica({ replica, graceMs: 30_000 });
      await quick.stopReplica({ replica });
    }),
  );
}

/** Stops replicas whatever happens to the calling scope (used to undo). */
export function undo(replicas: ReplicaRef[]): Promise<unknown> {
  return CancellationScope.nonCancellable(() => Promise.all(replicas.map((replica) => quick.stopReplica({ replica }))));
}
