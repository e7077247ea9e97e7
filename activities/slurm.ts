// Activities of the Slurm lend and reclaim workflows (the cordon is nodes.ts's setCordon): the node's
// replicas, room for them elsewhere, and the agent's Slurm calls. Each is idempotent (cordoning
// twice, resuming a resumed node, draining a drained one change nothing), so a retry after a
// worker or agent restart is safe. The waits heartbeat, so a dead worker is noticed in seconds.
import { ApplicationFailure, Context, heartbeat } from "@temporalio/activity";
import { slurmClient, type SlurmApi, type SlurmOp, type SlurmStatus__Output } from "../agent/slurm/client.ts";
import type { ReplicaRef } from "../workflows/model-types.ts";
import type { SlurmView } from "../workflows/slurm-types.ts";
import { perNode, type ActivityDeps, type NodeRef } from "./deps.ts";
import { fleetView, requirementFor } from "./fleet.ts";
import { place } from "./placement-plan.ts";
import { agentAt } from "./deps.ts";

const POLL_MS = 500;
/** Checks in a row with Slurm unreachable after which a reclaim stops waiting for it. */
const UNREACHABLE_CHECKS = 10;

const clients = new Map<string, SlurmApi>();
function slurmAt(deps: ActivityDeps, node: NodeRef): SlurmApi {
  return perNode(clients, node, (t) => slurmClient(t, deps.clusterToken, deps.tls));
}

function view(s: SlurmStatus__Output): SlurmView {
  return {
    available: s.available,
    state: s.state,
    reason: s.reason,
    drained: s.drained,
    drainedByLlmgw: s.drainedByLlmgw,
    jobs: s.jobs.map((j) => ({ id: j.id, name: j.name, state: j.state, user: j.user })),
    error: s.error,
  };
}

export function slurmActivities(deps: ActivityDeps) {
  const nodeRef = async (nodeId: string) => {
    const node = await deps.db.node.findUnique({ where: { id: nodeId } });
    if (!node) throw ApplicationFailure.nonRetryable(`node ${nodeId} is not registered`, "UnknownNode");
    return node;
  };
  const slurm = async (nodeId: string, op: SlurmOp): Promise<SlurmView> => {
    try {
      return view(await slurmAt(deps, await nodeRef(nodeId)).call(op));
    } catch (err) {
      // The node's agent has Slurm off: no retry changes that.
      if ((err as { code?: number }).code === 9) throw ApplicationFailure.nonRetryable((err as Error).message, "SlurmDisabled");
      throw err;
    }
  };

  return {
    async nodeReplicas(input: { nodeId: string }): Promise<ReplicaRef[]> {
      const rows = await deps.db.replica.findMany({ where: { nodeId: input.nodeId }, include: { version: true } });
      return rows.map((r) => ({ id: r.id, model: r.modelName, version: r.version.version, nodeId: r.nodeId, url: r.url }));
    },

    /** A node (and GPUs) for one more replica of the model away from `avoid`, or null: no room. */
    async roomElsewhere(input: { model: string; version: string; avoid: string }): Promise<{ nodeId: string; gpus: number[] } | null> {
      const fleet = (await fleetView(deps, input.model)).filter((n) => n.id !== input.avoid);
      const p = place(fleet, await requirementFor(deps, input.model, input.version, 1, []));
      return p.ok ? p.replicas[0]! : null;
    },

    /** Until the agent runs no engine (heartbeating). */
    async waitNodeEmpty(input: { nodeId: string }): Promise<void> {
      const agent = agentAt(deps, await nodeRef(input.nodeId));
      const ctx = Context.current();
      for (;;) {
        const { replicas } = await agent.listReplicas();
        const running = replicas.filter((r) => r.state !== "REPLICA_STATE_EXITED").length;
        if (running === 0) return;
        heartbeat({ running });
        await ctx.sleep(POLL_MS);
      }
    },

    async slurmDescribe(input: { nodeId: string }): Promise<SlurmView> {
      return slurm(input.nodeId, "describe");
    },

    async slurmResume(input: { nodeId: string }): Promise<SlurmView> {
      return slurm(input.nodeId, "resume");
    },

    /** Drains in Slurm with llmgw's reason; Slurm unreachable answers available: false instead of failing. */
    async slurmDrain(input: { nodeId: string }): Promise<SlurmView> {
      try {
        return await slurm(input.nodeId, "drain");
      } catch (err) {
        // UNAVAILABLE (Slurm, or the agent, does not answer) or Slurm off on the node: llmgw takes it back regardless.
        if ((err as { code?: number }).code === 14 || (err as { type?: string }).type === "SlurmDisabled") {
          return { available: false, state: "", reason: "", drained: false, drainedByLlmgw: false, jobs: [], error: (err as Error).message };
        }
        throw err;
      }
    },

    async slurmRequeue(input: { nodeId: string }): Promise<SlurmView> {
      return slurm(input.nodeId, "requeue");
    },

    /** Until Slurm shows the lent node usable (idle, or already running jobs); an administrator's drain ends the wait too. */
    async waitSlurmUsable(input: { nodeId: string }): Promise<SlurmView> {
      const ctx = Context.current();
      for (;;) {
        const s = await slurm(input.nodeId, "describe");
        if (s.available && (["idle", "mixed", "allocated", "completing"].includes(s.state) || (s.drained && !s.drainedByLlmgw))) return s;
        heartbeat({ state: s.state, error: s.error });
        await ctx.sleep(POLL_MS);
      }
    },

    /**
     * Until the node's last job ends, or the deadline (epoch ms) passes, or Slurm stays unreachable
     * (the agent answers, Slurm does not): a broken Slurm never keeps a node from llmgw.
     */
    async waitSlurmJobsEnd(input: { nodeId: string; untilMs: number | null }): Promise<{ ended: boolean; reason: "idle" | "deadline" | "unreachable"; jobs: number }> {
      const ctx = Context.current();
      let unreachable = 0;
      for (;;) {
        // An agent that does not answer fails the activity (retried): only Slurm's own silence counts below.
        const s = await slurm(input.nodeId, "describe");
        if (!s.available) {
          if (++unreachable >= UNREACHABLE_CHECKS) return { ended: true, reason: "unreachable", jobs: 0 };
        } else {
          unreachable = 0;
          if (s.jobs.length === 0) return { ended: true, reason: "idle", jobs: 0 };
          if (input.untilMs !== null && Date.now() >= input.untilMs) return { ended: false, reason: "deadline", jobs: s.jobs.length };
        }
        heartbeat({ jobs: s.jobs.length, error: s.error });
        await ctx.sleep(POLL_MS);
      }
    },
  };
}

export function closeSlurmClients(): void {
  for (const c of clients.values()) c.close();
  clients.clear();
}
