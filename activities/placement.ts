// Placement: which nodes get a model's new replicas. `place` is a pure function so it can be
// tested on tables of fleets; the activity feeds it the store's view of the fleet.
import { ApplicationFailure } from "@temporalio/activity";
import type { ActivityDeps } from "./deps.ts";

export interface FleetNode {
  id: string;
  cordoned: boolean;
  fresh: boolean;
  /** Replicas of this model already on the node. */
  modelReplicas: number;
  /** Replicas of any model on the node. */
  totalReplicas: number;
}

export type Placement = { ok: true; nodes: string[] } | { ok: false; reason: string };

/** Spreads `count` replicas over usable nodes, fewest of this model first, then least loaded. */
export function place(fleet: FleetNode[], count: number): Placement {
  const usable = fleet.filter((n) => n.fresh && !n.cordoned);
  if (usable.length === 0) {
    const why = fleet.map((n) => `${n.id}: ${n.cordoned ? "cordoned" : "not heard from recently"}`);
    return { ok: false, reason: fleet.length === 0 ? "no node has registered" : `no usable node (${why.join("; ")})` };
  }
  const load = new Map(usable.map((n) => [n.id, { model: n.modelReplicas, total: n.totalReplicas }]));
  const chosen: string[] = [];
  for (let i = 0; i < count; i++) {
    const best = usable
      .map((n) => ({ id: n.id, ...load.get(n.id)! }))
      .sort((a, b) => a.model - b.model || a.total - b.total || a.id.localeCompare(b.id))[0]!;
    chosen.push(best.id);
    const l = load.get(best.id)!;
    l.model += 1;
    l.total += 1;
  }
  return { ok: true, nodes: chosen };
}

export function placementActivities(deps: ActivityDeps) {
  return {
    async placeReplicas(input: { model: string; count: number }): Promise<{ nodeId: string }[]> {
      const nodes = await deps.db.node.findMany({ include: { replicas: { select: { modelName: true } } } });
      const now = Date.now();
      const fleet: FleetNode[] = nodes.map((n) => ({
        id: n.id,
        cordoned: n.cordoned,
        fresh: now - n.lastSeen.getTime() < deps.nodeFreshMs,
        modelReplicas: n.replicas.filter((r) => r.modelName === input.model).length,
        totalReplicas: n.replicas.length,
      }));
      const p = place(fleet, input.count);
      // Nothing fits now; an agent may register shortly, so let Temporal retry a few times.
      if (!p.ok) throw ApplicationFailure.retryable(`cannot place ${input.count} replica(s) of ${input.model}: ${p.reason}`, "NoPlacement");
      return p.nodes.map((nodeId) => ({ nodeId }));
    },
  };
}
