// Nodes: the fleet as the control plane sees it; cordon (no new replicas), uncordon, and drain
// (the node/<id>/drain workflow moves its replicas elsewhere first, then stops them).
import { Router } from "express";
import type { Client } from "@temporalio/client";
import type { PrismaClient } from "../../common/db.ts";
import { workflowUiUrl } from "../../common/temporal.ts";
import { operationSearchAttributes } from "../../workflows/search-attributes.ts";
import { audit } from "./audit.ts";
import { AdminError } from "./errors.ts";

const DRAIN_TIMEOUT_MS = 30 * 60_000;

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
    const nodes = await db.node.findMany({ orderBy: { id: "asc" }, include: { _count: { select: { replicas: true } } } });
    res.json({
      data: nodes.map((n) => ({ id: n.id, address: n.address, cordoned: n.cordoned, lastSeen: n.lastSeen, replicas: n._count.replicas, labels: n.labels, inventory: n.inventory })),
    });
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

  return r;
}
