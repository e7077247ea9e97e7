// POST /v1/images/generations in OpenAI's shape: a picture job on the built-in text-to-picture
// workflow, waited for; a client that leaves cancels it. Results come inline (b64_json) or as
// /v1/files/{id}/content URLs.
import fs from "node:fs";
import path from "node:path";
import { WorkflowFailedError } from "@temporalio/client";
import express from "express";
import { ApiError } from "../errors.ts";
import { parseBody, wrap } from "./express-util.ts";
import { imageRequest } from "./job-schemas.ts";
import type { JobsDeps } from "../jobs/service.ts";
import { startPictures } from "../jobs/starts.ts";
import type { GuardService } from "../guard/service.ts";
import type { Limiter } from "../auth/limiter.ts";
import { jobOwner } from "./job-admission.ts";

/** `guard`: the prompts are checked by the input rules of the key's and model's policies, like a chat's turns. */
export function imageRoutes(deps: JobsDeps, limits: Limiter, guard?: GuardService): express.Router {
  const r = express.Router();
  r.post(
    "/images/generations",
    wrap(async (req, res) => {
      const b = parseBody(imageRequest, req.body);
      // Before anything is made: a blocked prompt never reaches a job, a redacted one is what the job and its record keep.
      if (guard) Object.assign(b, guard.checkTexts(req.key!, b.model, { prompt: b.prompt, negative_prompt: b.negative_prompt }));
      const job = await startPictures(deps, jobOwner(limits, req, res), b);
      let done = false;
      res.on("close", () => {
        if (!done) void job.cancel().catch(() => undefined);
      });
      let fileIds: string[];
      try {
        ({ fileIds } = await job.result());
      } catch (err) {
        const cause = err instanceof WorkflowFailedError ? innermost(err) : (err as Error).message;
        throw new ApiError("upstream", `the picture could not be made: ${cause}`, { code: "job_failed" });
      } finally {
        done = true;
      }
      const data = [];
      for (const id of fileIds) {
        if (b.response_format === "url") data.push({ url: `${req.protocol}://${req.get("host")}/v1/files/${id}/content` });
        else {
          const f = await deps.db.file.findUniqueOrThrow({ where: { id } });
          data.push({ b64_json: fs.readFileSync(path.join(deps.dataDir, f.path)).toString("base64") });
        }
      }
      res.json({ created: Math.floor(Date.now() / 1000), data, id: job.job.id });
    }),
  );
  return r;
}

function innermost(err: Error): string {
  let e: Error = err;
  while (e.cause instanceof Error) e = e.cause;
  return e.message;
}
