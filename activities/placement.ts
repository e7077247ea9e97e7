// The placement activity: the store's view of the fleet fed to the pure `place` function. The
// choice is written at once as "placing" replica rows, under a lock, so placements running at the
// same time for other models see these GPUs as taken.
import { ApplicationFailure } from "@temporalio/activity";
import type { ActivityDeps } from "./deps.ts";
import { fleetView, requirementFor } from "./fleet.ts";
import { place } from "./placement-plan.ts";

/** Any fixed number: placements wait for each other on it, and nothing else uses it. */
const PLACEMENT_LOCK = 7_270_737;

export function placementActivities(deps: ActivityDeps) {
  return {
    /** Places the replicas named by `replicaIds`; repeated with the same ids, it returns the same places. */
    async placeReplicas(input: {
      model: string;
      version: string;
      versionId: string;
      replicaIds: string[];
      avoid?: string[];
    }): Promise<{ replicaId: string; nodeId: string; gpus: number[] }[]> {
      return deps.db.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(${PLACEMENT_LOCK})`;
        const placed = await tx.replica.findMany({ where: { id: { in: input.replicaIds } } });
        const todo = input.replicaIds.filter((id) => !placed.some((r) => r.id === id));
        const out = placed.map((r) => ({ replicaId: r.id, nodeId: r.nodeId, gpus: r.gpus }));
        if (todo.length === 0) return out;
        const fleet = await fleetView({ db: tx, nodeFreshMs: deps.nodeFreshMs }, input.model);
        const p = place(fleet, await requirementFor({ db: tx }, input.model, input.version, todo.length, input.avoid ?? []));
        // Nothing fits now; an agent may register or free its GPUs shortly, so Temporal retries.
        if (!p.ok) throw ApplicationFailure.retryable(`cannot place ${todo.length} replica(s) of ${input.model}: ${p.reason}`, "NoPlacement");
        for (const [i, r] of p.replicas.entries()) {
          const id = todo[i]!;
          await tx.replica.create({ data: { id, modelName: input.model, versionId: input.versionId, nodeId: r.nodeId, gpus: r.gpus, port: 0, url: "", state: "placing" } });
          out.push({ replicaId: id, nodeId: r.nodeId, gpus: r.gpus });
        }
        return out;
        // Placements queue on the lock: under a burst (many models served at once) that takes a while.
      }, { maxWait: 60_000, timeout: 60_000 });
    },
  };
}
