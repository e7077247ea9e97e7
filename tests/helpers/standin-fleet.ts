// A model's replicas kept in memory, and the activities that place, start, bring up, drain and stop
// them, standing in for the real ones in the workflow tests (tests/workflow): what the workflows
// decide is seen in what is left running, not only in the calls they made.
import type { Activities } from "../../activities/index.ts";
import type { ReplicaRef } from "../../workflows/model-types.ts";

type Live = ReplicaRef & { ready: boolean };

export interface StandInFleet {
  live: Map<string, Live>;
  /** The versions of the replicas running now, sorted. */
  versions(): string[];
  /** The fewest ready replicas left right after any stop. */
  fewestReadyAfterStop(): number;
  activities: Pick<
    Activities,
    "ensureVersion" | "versionSpec" | "weightsPlan" | "liveReplicas" | "placeReplicas" | "startReplica" | "bringUpReplica" | "drainReplica" | "stopReplica"
  >;
}

/**
 * `initial` replicas of `model` on node-1, ready. `bringUp` runs before a replica counts as ready
 * (a test holds it there, or fails it).
 */
export function standInFleet(model: string, initial: string[], bringUp: (r: ReplicaRef) => Promise<void> = async () => undefined): StandInFleet {
  const live = new Map<string, Live>();
  initial.forEach((version, i) => live.set(`${model}-old-${i}`, { id: `${model}-old-${i}`, model, version, nodeId: "node-1", url: `http://standin/${i}`, ready: true }));
  let fewest = Infinity;
  return {
    live,
    versions: () => [...live.values()].map((r) => r.version).sort(),
    fewestReadyAfterStop: () => fewest,
    activities: {
      ensureVersion: async (i) => ({ versionId: `${i.version}-id` }),
      versionSpec: async (i) => ({ model: i.model, version: i.version, versionId: `${i.version}-id`, engine: "sim", args: [] }),
      weightsPlan: async () => ({ fetch: null, weights: "", stallMs: 60_000 }),
      liveReplicas: async () => [...live.values()].map((r) => ({ ...r })),
      placeReplicas: async (i) => i.replicaIds.map((replicaId) => ({ replicaId, nodeId: "node-1", gpus: [] })),
      startReplica: async (i) => {
        const r: ReplicaRef = { id: i.replicaId, model: i.model, version: i.version, nodeId: i.nodeId, url: `http://standin/${i.replicaId}` };
        live.set(r.id, { ...r, ready: false });
        return r;
      },
      bringUpReplica: async ({ replica }) => {
        await bringUp(replica);
        const r = live.get(replica.id);
        if (r) r.ready = true;
      },
      drainReplica: async () => ({ idle: true }),
      stopReplica: async ({ replica }) => {
        live.delete(replica.id);
        fewest = Math.min(fewest, [...live.values()].filter((r) => r.ready).length);
      },
    },
  };
}
