// Every project's batches for the operator (ctl batches): list (by project, by status), show, cancel.
// The reading and cancelling are the client API's own (gateway/jobs/batches.ts); a cancel is audited.
import { Router, type NextFunction, type Request, type Response } from "express";
import type { Client } from "@temporalio/client";
import { z } from "zod";
import type { PrismaClient } from "../../common/db.ts";
import { ApiError } from "../errors.ts";
import { batchView } from "../jobs/batch-view.ts";
import { cancelBatch, findBatch } from "../jobs/batches.ts";
import { audit } from "./audit.ts";
import { AdminError, check } from "./errors.ts";

export const batchesQuery = z.object({
  project: z.string().min(1).optional().describe("a project's name"),
  status: z.enum(["validating", "in_progress", "finalizing", "completed", "failed", "expired", "cancelling", "cancelled"]).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

/** The client API's errors (ApiError) as the admin API's. */
const route = (fn: (req: Request, res: Response) => Promise<void>) => (req: Request, res: Response, next: NextFunction) =>
  void fn(req, res).catch((err: unknown) => next(err instanceof ApiError ? new AdminError(err.status, err.message, err.opts.param ?? null) : err));

export function batchAdminRoutes(db: PrismaClient, temporal: Client): Router {
  const r = Router();
  const deps = { db, temporal };
  const withProject = async (b: Parameters<typeof batchView>[0]) => ({ ...batchView(b), project: (await db.project.findUnique({ where: { id: b.projectId } }))?.name ?? null });
  r.get(
    "/batches",
    route(async (req, res) => {
      const q = check(batchesQuery, req.query);
      let projectId: string | undefined;
      if (q.project) {
        const p = await db.project.findUnique({ where: { name: q.project } });
        if (!p) throw new AdminError(404, `no project '${q.project}'`, "project");
        projectId = p.id;
      }
      const rows = await db.batch.findMany({ where: { projectId, status: q.status }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: q.limit, include: { project: true } });
      res.json({ data: rows.map((b) => ({ ...batchView(b), project: b.project.name })) });
    }),
  );
  r.get(
    "/batches/:id",
    route(async (req, res) => void res.json(await withProject(await findBatch(deps, String(req.params.id), null)))),
  );
  r.post(
    "/batches/:id/cancel",
    route(async (req, res) => {
      const before = await findBatch(deps, String(req.params.id), null);
      const after = await cancelBatch(deps, before);
      if (after.status !== before.status) await audit(db, { action: "batch.cancel", target: before.id, before: batchView(before), after: batchView(after) });
      res.json(await withProject(after));
    }),
  );
  return r;
}
