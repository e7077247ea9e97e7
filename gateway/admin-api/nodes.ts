// Nodes: the fleet as the control plane sees it; cordon (no new replicas), uncordon, drain
// (the node/<id>/drain workflow moves its replicas elsewhere first, then stops them), and remove
// (refused while replicas remain unless forced: `ctl node remove` drains first).
import { Router } from "express";
import { z } from "zod";
import type { Client } from "@temporalio/client";
import { config } from "../../common/config.ts";
import type { PrismaClient } from "../../common/db.ts";
import { workflowUiUrl } from "../../common/temporal.ts";
import { operationSearchAttributes } from "../../workflows/search-attributes.ts";
import { audit } from "./audit.ts";
import { AdminError, check } from "./errors.ts";

const DRAIN_TIMEOUT_MS = 30 * 60_000;

export const nodeRemoveQuery = z.strictObject({
  force: z.enum(["true", "false"]).optional().describe("true: remove the node even with replicas (their records go with it; engines are not stopped) or its agent running; else refused in both cases"),
});

/** Heartbeats an agent may miss before it counts as stopped: a running agent would register its node again. */
const MISSED_HEARTBEATS = 3;

/** GET /nodes's data; the MCP gateway's llmgw-admin tools read it too. */
export async function listNodes(db: PrismaClient) {
  const nodes = await db.node.findMany({ orderBy: { id: "asc" }, include: { _count: { select: { replicas: true } } } });
  return nodes.map((n) => ({ id: n.id, address: n.address, cordoned: n.cordoned, lastSeen: n.lastSeen, replicas: n._count.replicas, labels: n.labels, inventory: n.inventory }));
}

export function nodeRoutes(db: PrismaClient, temporal: Client, taskQueue: string): Router {
  const r = Router();

  const node = async (id: string) => {
    const n = await db.node.findUnique({ where: { id } });
    if (!n) {
      const ids = (await db.node.findMany({ select: { id: true } })).map((x) => x.id);
      throw new AdminError(404, `no node '${id}'; nodes: ${ids.join(", ") || "(none)"}`, "id");
    }
    return n;
  };

  r.get("/nodes", async (_req, res) => {
    res.json({ data: await listNodes(db) });
  });

  for (const [action, cordoned] of [["cordon", true], ["uncordon", false]] as const) {
    r.post(`/nodes/:id/${action}`, async (req, res) => {
      const before = await node(String(req.params.id));
      await db.node.update({ where: { id: before.id }, data: { cordoned } });
      await audit(db, { action: `node.${action}`, target: `node/${before.id}`, before: { cordoned: before.cordoned }, after: { cordoned } });
      res.json({ id: before.id, cordoned });
    });
  }

  r.post("/nodes/:id/drain", async (req, res) => {
    const n = await node(String(req.params.id));
    const workflowId = `node/${n.id}/drain`;
    await temporal.workflow.start("drainNode", {
      workflowId,
      taskQueue,
      args: [{ nodeId: n.id, timeoutMs: DRAIN_TIMEOUT_MS }],
      workflowIdConflictPolicy: "USE_EXISTING",
      typedSearchAttributes: operationSearchAttributes(null, "drain", n.id),
      memo: { summary: `drain ${n.id}: move its replicas elsewhere, then stop them` },
    });
    await audit(db, { action: "node.drain", target: `node/${n.id}`, before: { cordoned: n.cordoned }, after: { cordoned: true } });
    res.status(202).json({ operationId: workflowId, workflowId, uiUrl: workflowUiUrl(workflowId) });
  });

  r.delete("/nodes/:id", async (req, res) => {
    const { force } = check(nodeRemoveQuery, req.query);
    const n = await node(String(req.params.id));
    const replicas = await db.replica.count({ where: { nodeId: n.id } });
    if (replicas > 0 && force !== "true") {
      throw new AdminError(409, `node '${n.id}' still has ${replicas} replica(s): drain it first (POST /api/v1/nodes/${n.id}/drain), or force=true to remove them with it`, "id");
    }
    const heardMs = Date.now() - n.lastSeen.getTime();
    if (heardMs < MISSED_HEARTBEATS * config().LLMGW_HEARTBEAT_MS && force !== "true") {
      throw new AdminError(409, `the agent of node '${n.id}' is still running (heard from ${(heardMs / 1000).toFixed(1)} s ago): stop it first (llmgw stop agent on that machine), or it registers the node again; force=true removes it anyway`, "id");
    }
    // Its replicas' rows go with it (ON DELETE CASCADE); their models' workflows place them again elsewhere.
    await db.node.delete({ where: { id: n.id } });
    await audit(db, { action: "node.remove", target: `node/${n.id}`, before: { address: n.address, replicas }, after: null });
    res.json({ id: n.id, removed: true, replicas });
  });

  return r;
}
