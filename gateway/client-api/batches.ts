// /v1/batches in OpenAI's shape: create, retrieve, list (after/limit), cancel. A batch is its
// project's alone: another project's id is "not found". The work is gateway/jobs/batches.ts's.
import express from "express";
import { ApiError } from "../errors.ts";
import { batchView, cancelBatch, createBatch, findBatch, listBatches } from "../jobs/batches.ts";
import type { JobsDeps } from "../jobs/service.ts";
import { batchCreateRequest, batchListQuery } from "./batch-schemas.ts";
import { parseBody, wrap } from "./express-util.ts";
import { firstIssue } from "./schemas.ts";

export function batchRoutes(deps: JobsDeps): express.Router {
  const r = express.Router();
  r.post(
    "/batches",
    wrap(async (req, res) => {
      if (!req.body || typeof req.body !== "object" || Array.isArray(req.body)) throw new ApiError("invalid_request", "send a JSON object {input_file_id, endpoint, completion_window} as application/json", { param: null });
      const body = parseBody(batchCreateRequest, req.body);
      res.json(batchView(await createBatch(deps, req.key!, { inputFileId: body.input_file_id, endpoint: body.endpoint, metadata: body.metadata ?? null })));
    }),
  );
  r.get(
    "/batches",
    wrap(async (req, res) => {
      const q = batchListQuery.safeParse(req.query);
      if (!q.success) {
        const { message, param } = firstIssue(q.error);
        throw new ApiError("invalid_request", message, { param: param || null });
      }
      res.json(await listBatches(deps, req.key!.projectId, q.data));
    }),
  );
  r.get(
    "/batches/:id",
    wrap(async (req, res) => void res.json(batchView(await findBatch(deps, String(req.params.id), req.key!.projectId)))),
  );
  r.post(
    "/batches/:id/cancel",
    wrap(async (req, res) => void res.json(batchView(await cancelBatch(deps, await findBatch(deps, String(req.params.id), req.key!.projectId))))),
  );
  return r;
}
