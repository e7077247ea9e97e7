// Jobs (pictures, 3D, ComfyUI workflows) are admitted by the key's limits as a request is: rate,
// concurrency and the money and GPU-hour budgets, with the same 429s. The job's spend is not known
// here (it is priced and timed when its outputs are kept, activities/jobs.ts, which adds it to the
// budget counters), so the admission is released with nothing spent once the answer is sent.
import type { NextFunction, Response } from "express";
import type { Limiter } from "../auth/limiter.ts";
import type { Authed } from "./context.ts";

/** The POST routes that start a job. */
const JOB_STARTS = new Set(["/images/generations", "/3d/generations", "/workflows/runs"]);

export function jobAdmission(limits: Limiter) {
  return (req: Authed, res: Response, next: NextFunction): void => {
    if (req.method !== "POST" || !JOB_STARTS.has(req.path) || !req.key) return next();
    limits.admit(req.key).then((d) => {
      if (d.refused) return next(d.refused);
      res.on("close", () => d.release({ promptTokens: 0, completionTokens: 0, costMicros: 0 }));
      next();
    }, next);
  };
}
