// /v1/workflows/runs: any ComfyUI workflow of the catalog (comfy_workflows), run with the inputs
// its entry declares. Every input is checked, files included, before a job exists.
import express from "express";
import { ApiError } from "../errors.ts";
import { parseBody, wrap } from "./express-util.ts";
import { jobReadRoutes } from "./job-routes.ts";
import { runRequest } from "./job-schemas.ts";
import { checkInputs, inputDecls } from "../jobs/inputs.ts";
import { jobView, startJob, type JobsDeps } from "../jobs/service.ts";

const OBJECT = "workflow.run";

export function workflowRunRoutes(deps: JobsDeps): express.Router {
  const r = express.Router();
  r.post(
    "/workflows/runs",
    wrap(async (req, res) => {
      const b = parseBody(runRequest, req.body);
      const wf = await deps.db.comfyWorkflow.findUnique({ where: { name: b.model } });
      if (!wf) throw new ApiError("not_found", `no workflow '${b.model}' in the catalog`, { param: "model", code: "model_not_found" });
      const decls = inputDecls.parse(wf.inputs);
      const projectId = req.key!.projectId;
      const { values, files } = await checkInputs(decls, b.inputs, { db: deps.db, dataDir: deps.dataDir, projectId });
      const output = wf.output === "mesh" ? "mesh" : wf.output === "image" ? "image" : "file";
      const { job } = await startJob(
        deps,
        { kind: "workflow", model: wf.model, projectId, keyId: req.key!.id, graph: wf.graph as Record<string, unknown>, values, files, output },
        { workflow: wf.name, inputs: b.inputs },
      );
      res.status(202).json(await jobView(deps, job, OBJECT));
    }),
  );
  jobReadRoutes(r, deps, "/workflows/runs", "workflow", OBJECT);
  return r;
}
