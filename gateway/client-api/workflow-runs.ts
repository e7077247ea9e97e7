// /v1/workflows/runs: any ComfyUI workflow of the catalog (comfy_workflows), run with the inputs
// its entry declares. Every input is checked, files included, before a job exists.
import express from "express";
import type { Limiter } from "../auth/limiter.ts";
import { parseBody, wrap } from "./express-util.ts";
import { jobOwner } from "./job-admission.ts";
import { jobReadRoutes } from "./job-routes.ts";
import { runRequest } from "./job-schemas.ts";
import { jobView, type JobsDeps } from "../jobs/service.ts";
import { startWorkflowRun } from "../jobs/starts.ts";

const OBJECT = "workflow.run";

export function workflowRunRoutes(deps: JobsDeps, limits: Limiter): express.Router {
  const r = express.Router();
  r.post(
    "/workflows/runs",
    wrap(async (req, res) => {
      const b = parseBody(runRequest, req.body);
      const job = await startWorkflowRun(deps, jobOwner(limits, req, res), b);
      res.status(202).json(await jobView(deps, job, OBJECT));
    }),
  );
  jobReadRoutes(r, deps, "/workflows/runs", "workflow", OBJECT);
  return r;
}
