// What the admin API reads, as functions the MCP gateway's read-only llmgw-admin tools call (the
// gateway process hands them to gateway/mcp/ as its AdminReads: the MCP layer sits below the APIs
// and may not import them). The routes' own read functions are used, not queries of their own.
import type { Client } from "@temporalio/client";
import type { PrismaClient } from "../../common/db.ts";
import type { AgentApi } from "../../agent/client.ts";
import { explainPlacement } from "./catalog.ts";
import { AdminError } from "./errors.ts";
import { listModels } from "./models.ts";
import { listNodes } from "./nodes.ts";
import { operationStatus } from "./operations.ts";

/** A node's agent is counted as heard from within this long (as the placement reads the fleet). */
const HEARD_MS = 30_000;
/** The most of one replica's log a tail returns. */
export const MAX_LOG_TAIL_BYTES = 256 << 10;

/** Its agent client for a node (one channel per node, kept by the caller). */
export type AgentFor = (node: { id: string; address: string }) => AgentApi;

/** A replica's engine log, its last `tailBytes`, read from its node's agent (not followed). */
function logTail(agent: AgentApi, replicaId: string, tailBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const stream = agent.logs({ replicaId, tailBytes, follow: false }, { timeoutMs: 10_000 });
    stream.on("data", (c: { data: Buffer }) => chunks.push(c.data));
    stream.on("error", (err: Error & { details?: string }) => reject(new Error(err.details ?? err.message)));
    stream.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

export function adminReads(db: PrismaClient, temporal: Client, agentFor: AgentFor) {
  return {
    async clusterStatus() {
      const [nodes, models, replicas, jobs] = await Promise.all([
        db.node.findMany({ select: { cordoned: true, lastSeen: true } }),
        listModels(db),
        db.replica.groupBy({ by: ["state"], _count: true }),
        db.job.groupBy({ by: ["state"], where: { state: { in: ["queued", "waiting_gpu", "running"] } }, _count: true }),
      ]);
      const now = Date.now();
      return {
        nodes: { total: nodes.length, heard: nodes.filter((n) => now - n.lastSeen.getTime() < HEARD_MS).length, cordoned: nodes.filter((n) => n.cordoned).length },
        models: { total: models.length, serving: models.filter((m) => m.ready > 0).length },
        replicas: Object.fromEntries(replicas.map((r) => [r.state, r._count])),
        jobs: Object.fromEntries(jobs.map((j) => [j.state, j._count])),
      };
    },
    listNodes: () => listNodes(db),
    listModels: () => listModels(db),
    async listReplicas(where: { model?: string; node?: string }) {
      const rows = await db.replica.findMany({ where: { ...(where.model && { modelName: where.model }), ...(where.node && { nodeId: where.node }) }, include: { version: true }, orderBy: [{ modelName: "asc" }, { id: "asc" }] });
      return rows.map((r) => ({ id: r.id, model: r.modelName, version: r.version.version, engine: r.version.engine, node: r.nodeId, gpus: r.gpus, state: r.state, url: r.url, since: r.updatedAt }));
    },
    explainPlacement: (model: string, replicas: number, version?: string) => explainPlacement(db, model, replicas, version),
    operationStatus: (id: string) => operationStatus(temporal, id),
    /** The tail of the engine log of each replica on the node (or the one named). */
    async nodeLogs(nodeId: string, replicaId: string | undefined, tailBytes: number) {
      const node = await db.node.findUnique({ where: { id: nodeId }, include: { replicas: { select: { id: true } } } });
      if (!node) throw new AdminError(404, `no node '${nodeId}'`, "node");
      const ids = replicaId ? [replicaId] : node.replicas.map((r) => r.id);
      if (replicaId && !node.replicas.some((r) => r.id === replicaId)) throw new AdminError(404, `no replica '${replicaId}' on node '${nodeId}'; there: ${node.replicas.map((r) => r.id).join(", ") || "(none)"}`, "replica");
      const agent = agentFor(node);
      const bytes = Math.min(tailBytes, MAX_LOG_TAIL_BYTES);
      return Promise.all(ids.map(async (id) => ({ replica: id, log: await logTail(agent, id, bytes).catch((err: Error) => `(the log could not be read: ${err.message})`) })));
    },
  };
}

export type AdminReadFns = ReturnType<typeof adminReads>;
