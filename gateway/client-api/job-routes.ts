// What the job routes share: listing, GET and cancel of a job of one kind (images, 3D, workflow runs).
import type express from "express";
import { cancelJob, jobView, ownedJob, type JobsDeps } from "../jobs/service.ts";
import type { Authed } from "./context.ts";
import { wrap } from "./express-util.ts";

/** GET <base>, GET <base>/:id and POST <base>/:id/cancel for jobs of one kind. */
export function jobReadRoutes(r: express.Router, deps: JobsDeps, base: string, kind: string, object: string): void {
  r.get(
    base,
    wrap(async (req, res) => {
      const rows = await deps.db.job.findMany({ where: { projectId: req.key!.projectId, kind }, orderBy: { createdAt: "desc" }, take: 100 });
      res.json({ object: "list", data: await Promise.all(rows.map((j) => jobView(deps, j, object))) });
    }),
  );
  r.get(
    `${base}/:id`,
    wrap(async (req: Authed, res) => void res.json(await jobView(deps, await ownedJob(deps, String(req.params.id), req.key!.projectId, [kind]), object))),
  );
  r.post(
    `${base}/:id/cancel`,
    wrap(async (req, res) => {
      const job = await ownedJob(deps, String(req.params.id), req.key!.projectId, [kind]);
      await cancelJob(deps, job);
      res.json(await jobView(deps, (await deps.db.job.findUnique({ where: { id: job.id } }))!, object));
    }),
  );
}
