// /v1/3d/generations: a mesh from a picture (inline base64 or an uploaded file id) on the built-in
// picture-to-mesh workflow. Answers 202 with the job at once; clients poll it and fetch the GLB.
import express from "express";
import { ApiError } from "../errors.ts";
import { parseBody, wrap } from "./express-util.ts";
import { jobReadRoutes } from "./job-routes.ts";
import { DATA_PREFIX, meshRequest } from "./job-schemas.ts";
import { ownedFile, storeBytes } from "../jobs/file-store.ts";
import { sniffKind, readHead } from "../jobs/inputs.ts";
import { comfyModel, jobView, startJob, type JobsDeps } from "../jobs/service.ts";
import { PICTURE_TO_MESH } from "../jobs/templates.ts";
import path from "node:path";

const OBJECT = "3d.generation";

export function meshRoutes(deps: JobsDeps): express.Router {
  const r = express.Router();
  r.post(
    "/3d/generations",
    wrap(async (req, res) => {
      const b = parseBody(meshRequest, req.body);
      const model = await comfyModel(deps.db, b.model);
      const projectId = req.key!.projectId;
      let fileId: string;
      if (b.image !== undefined) {
        const raw = Buffer.from(b.image.replace(DATA_PREFIX, ""), "base64");
        if (sniffKind(raw) !== "image") throw new ApiError("invalid_request", "image: not a base64 PNG, JPEG, GIF or WebP picture", { param: "image" });
        fileId = (await storeBytes(deps, projectId, "vision", "input.png", raw)).id;
      } else {
        const f = await ownedFile(deps.db, b.file_id!, projectId);
        if (!f) throw new ApiError("invalid_request", `file_id: no file '${b.file_id}' of yours`, { param: "file_id" });
        if (sniffKind(readHead(path.join(deps.dataDir, f.path))) !== "image") throw new ApiError("invalid_request", `file_id: file ${f.id} is not a picture`, { param: "file_id" });
        fileId = f.id;
      }
      const seed = b.seed ?? Math.floor(Math.random() * 2 ** 32);
      const { job } = await startJob(
        deps,
        {
          kind: "mesh",
          model,
          projectId,
          keyId: req.key!.id,
          graph: PICTURE_TO_MESH,
          values: { resolution: b.resolution, seed, steps: b.steps, checkpoint: model },
          files: [{ placeholder: "image", fileId }],
          output: "mesh",
        },
        { model, file_id: fileId, resolution: b.resolution, output: b.output, seed, steps: b.steps },
      );
      res.status(202).json(await jobView(deps, job, OBJECT));
    }),
  );
  jobReadRoutes(r, deps, "/3d/generations", "mesh", OBJECT);
  return r;
}
