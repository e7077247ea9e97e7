// Nodes as operations see them: cordons, what runs where, and the fleet watch's look at the fleet
// (lost nodes, dead engines, engines nobody wants).
import { Context } from "@temporalio/activity";
import { raise } from "../common/notifier.ts";
import { agentAt, type ActivityDeps } from "./deps.ts";
import { announce } from "./router-feed.ts";

/** An engine the store does not know is killed only after this long, so a start in flight is safe. */
const ORPHAN_GRACE_MS = 60_000;

export interface FleetCheck {
  /** Nodes unheard from past the limit that still hold replicas, with their models. */
  lost: { nodeId: string; models: string[] }[];
  /** Models whose replicas died (engine exited or vanished): they need a repair. */
  died: string[];
  /** Engines stopped because no replica record wants them. */
  reaped: number;
  fresh: string[];
}

export function nodeActivities(deps: ActivityDeps) {
  return {
    async setCordon(input: { nodeId: string; cordoned: boolean }): Promise<void> {
      await deps.db.node.update({ where: { id: input.nodeId }, data: { cordoned: input.cordoned } });
    },

    async modelsOnNode(input: { nodeId: string }): Promise<{ models: string[]; replicas: number }> {
      const rows = await deps.db.replica.findMany({ where: { nodeId: input.nodeId }, select: { modelName: true } });
      return { models: [...new Set(rows.map((r) => r.modelName))], replicas: rows.length };
    },

    async fleetCheck(input: { lostMs: number }): Promise<FleetCheck> {
      const nodes = await deps.db.node.findMany({ include: { replicas: { include: { version: true } } } });
      const now = Date.now();
      const out: FleetCheck = { lost: [], died: [], reaped: 0, fresh: [] };
      // A retried check follows a failed one, most often the store being away: heartbeats could
      // not be recorded meanwhile, so every node looks unheard. Judge lost nodes next round.
      const afterFailure = Context.current().info.attempt > 1;
      for (const n of nodes) {
        if (now - n.lastSeen.getTime() > input.lostMs) {
          if (n.replicas.length && !afterFailure) {
            const lost = { nodeId: n.id, models: [...new Set(n.replicas.map((r) => r.modelName))] };
            out.lost.push(lost);
            raise({
              kind: "node_lost",
              subject: n.id,
              summary: `node ${n.id} unheard for ${Math.round((now - n.lastSeen.getTime()) / 1000)} s; its replicas of ${lost.models.join(", ")} are placed elsewhere`,
              details: { node: n.id, models: lost.models, lastSeen: n.lastSeen.toISOString() },
            });
          }
          continue;
        }
        out.fresh.push(n.id);
        let running;
        try {
          running = (await agentAt(deps, n).listReplicas({ timeoutMs: 3000 })).replicas;
        } catch {
          continue; // Not answering now: the next look, or the lost-node rule, decides.
        }
        const alive = new Set(running.filter((r) => r.state !== "REPLICA_STATE_EXITED").map((r) => r.replicaId));
        for (const r of n.replicas) {
          // Rows being placed or drained are a workflow's business, not a dead engine.
          if (r.state === "placing" || r.state === "draining" || alive.has(r.id)) continue;
          await announce(deps, "gone", { id: r.id, model: r.modelName, version: r.version.version, nodeId: r.nodeId, url: r.url });
          await deps.db.replica.deleteMany({ where: { id: r.id } });
          if (!out.died.includes(r.modelName)) out.died.push(r.modelName);
        }
        const known = new Set(n.replicas.map((r) => r.id));
        for (const r of running) {
          if (known.has(r.replicaId) || now - Number(r.startedAtMs) < ORPHAN_GRACE_MS) continue;
          await agentAt(deps, n).stopReplica({ replicaId: r.replicaId, graceMs: 5000 });
          out.reaped += 1;
        }
      }
      return out;
    },
  };
}
