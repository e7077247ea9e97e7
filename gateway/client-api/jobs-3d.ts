// /v1/3d/generations: a mesh from a picture (inline base64 or an uploaded file id) on the built-in
// picture-to-mesh workflow. Answers 202 with the job at once; clients poll it and fetch the GLB.
import express from "express";
import type { Limiter } from "../auth/limiter.ts";
import { parseBody, wrap } from "./express-util.ts";
import { jobOwner } from "./job-admission.ts";
import { jobReadRoutes } from "./job-routes.ts";
import { DATA_PREFIX, meshRequest } from "./job-schemas.ts";
import { jobView, type JobsDeps } from "../jobs/service.ts";
import { startMesh } from "../jobs/starts.ts";

const OBJECT = "3d.generation";

export function meshRoutes(deps: JobsDeps, limits: Limiter): express.Router {
  const r = express.Router();
  r.post(
    "/3d/generations",
    wrap(async (req, res) => {
      const b = parseBody(meshRequest, req.body);
      const image = b.image === undefined ? undefined : Buffer.from(b.image.replace(DATA_PREFIX, ""), "base64");
      const job = await startMesh(deps, jobOwner(limits, req, res), { ...b, image });
      res.status(202).json(await jobView(deps, job, OBJECT));
    }),
  );
  jobReadRoutes(r, deps, "/3d/generations", "mesh", OBJECT);
  return r;
}
