// What the job routes share: a checked body or a 400 naming the field, and GET/cancel of a job.
import type express from "express";
import type { z } from "zod";
import { ApiError } from "../client-api/errors.ts";
import type { Authed } from "../client-api/forward.ts";
import { wrap } from "../client-api/files.ts";
import { firstIssue } from "../client-api/schemas.ts";
import { cancelJob, jobView, ownedJob, type JobsDeps } from "./service.ts";

export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const r = schema.safeParse(body ?? {});
  if (!r.success) {
    const { message, param } = firstIssue(r.error);
    throw new ApiError("invalid_request", message, { param: param || null });
  }
  return r.data;
}

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
