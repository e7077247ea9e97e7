// Slurm beside llmgw: each node's state in llmgw and in Slurm, and lend / reclaim, which start the
// node's workflow node/<id>/slurm (one at a time per node: a second while one runs is a 409).
import { Router } from "express";
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from "@temporalio/client";
import { TypedSearchAttributes } from "@temporalio/common";
import { z } from "zod";
import { config } from "../../common/config.ts";
import type { PrismaClient } from "../../common/db.ts";
import { workflowUiUrl } from "../../common/temporal.ts";
import { KIND_KEY, NODE_KEY } from "../../workflows/search-attributes.ts";
import { slurmWorkflowId, type SlurmView } from "../../workflows/slurm-types.ts";
import { audit } from "./audit.ts";
import { AdminError, check } from "./errors.ts";

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
/** "90s", "30m", "2h", "1d", or seconds as a number. */
const duration = z.union([
  z.number().int().min(0).max(30 * 86_400).transform((s) => s * 1000),
  z.string().regex(/^\d+[smhd]$/, "a duration like 90s, 30m, 2h or 1d").transform((s) => Number(s.slice(0, -1)) * UNIT_MS[s.slice(-1) as keyof typeof UNIT_MS]),
]);
export const lendBody = z.object({ force: z.boolean().default(false) });
export const reclaimBody = z.object({ deadline: duration.nullable().default(null) });

/** What llmgw makes of a node, from its cordon and its Slurm workflow's last run. */
function llmgwState(cordoned: boolean, run: { type: string; status: string } | null): string {
  if (run?.status === "RUNNING") return run.type === "slurmLend" ? "lending" : "reclaiming";
  if (run?.type === "slurmLend" && run.status === "COMPLETED") return "lent";
  return cordoned ? "cordoned" : "serving";
}

export function slurmRoutes(db: PrismaClient, temporal: Client, taskQueue: string): Router {
  const r = Router();
  const settings = () => {
    const c = config();
    const lendable = c.LLMGW_SLURM_NODES.split(",").map((s) => s.trim()).filter(Boolean);
    return { enabled: c.LLMGW_SLURM_ENABLED === "1", controller: c.LLMGW_SLURM_CONTROLLER ?? null, partition: c.LLMGW_SLURM_PARTITION, lendable };
  };
  const mayLend = (id: string) => settings().lendable.some((n) => n === "*" || n === id);

  const lastRun = async (nodeId: string) => {
    try {
      const d = await temporal.workflow.getHandle(slurmWorkflowId(nodeId)).describe();
      return { type: d.type, status: d.status.name };
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return null;
      throw err;
    }
  };

  /** The node for a lend or reclaim, checked against the settings. */
  const target = async (id: string) => {
    if (!settings().enabled) throw new AdminError(409, "Slurm is not enabled (LLMGW_SLURM_ENABLED=1)");
    const node = await db.node.findUnique({ where: { id } });
    if (!node) throw new AdminError(404, `no node '${id}'`, "node");
    if (!mayLend(id)) throw new AdminError(403, `node '${id}' is not among the nodes that may be lent (LLMGW_SLURM_NODES)`, "node");
    return node;
  };

  const start = async (res: import("express").Response, nodeId: string, kind: "slurmLend" | "slurmReclaim", args: unknown[]) => {
    const workflowId = slurmWorkflowId(nodeId);
    try {
      await temporal.workflow.start(kind, {
        workflowId,
        taskQueue,
        args,
        typedSearchAttributes: new TypedSearchAttributes([
          { key: NODE_KEY, value: nodeId },
          { key: KIND_KEY, value: kind === "slurmLend" ? "slurm-lend" : "slurm-reclaim" },
        ]),
      });
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) throw new AdminError(409, `node '${nodeId}' already has a Slurm operation running (${workflowId})`, "node");
      throw err;
    }
    await audit(db, { action: kind === "slurmLend" ? "slurm.lend" : "slurm.reclaim", target: `node/${nodeId}`, after: args[0] });
    res.status(202).json({ operationId: workflowId, uiUrl: workflowUiUrl(workflowId) });
  };

  r.get("/slurm", async (_req, res) => {
    const nodes = await db.node.findMany({ orderBy: { id: "asc" } });
    const data = await Promise.all(
      nodes.map(async (n) => {
        const slurm = ((n.inventory ?? {}) as { slurm?: SlurmView | null }).slurm ?? null;
        const run = await lastRun(n.id);
        return {
          id: n.id,
          llmgw: llmgwState(n.cordoned, run),
          cordoned: n.cordoned,
          lendable: mayLend(n.id),
          slurm: slurm ? { available: slurm.available, state: slurm.state, reason: slurm.reason, drainedByLlmgw: slurm.drainedByLlmgw, error: slurm.error } : null,
          jobs: slurm?.jobs ?? [],
          operation: run ? { id: slurmWorkflowId(n.id), kind: run.type, status: run.status } : null,
        };
      }),
    );
    res.json({ ...settings(), data });
  });

  r.post("/slurm/nodes/:id/lend", async (req, res) => {
    const body = check(lendBody, req.body ?? {});
    const node = await target(req.params.id);
    await start(res, node.id, "slurmLend", [{ nodeId: node.id, force: body.force }]);
  });

  r.post("/slurm/nodes/:id/reclaim", async (req, res) => {
    const body = check(reclaimBody, req.body ?? {});
    const node = await target(req.params.id);
    await start(res, node.id, "slurmReclaim", [{ nodeId: node.id, deadlineMs: body.deadline }]);
  });

  return r;
}
