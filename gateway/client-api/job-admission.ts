// Jobs (pictures, 3D, ComfyUI workflows) are admitted by the key's limits as a request is: rate,
// concurrency and the money and GPU-hour budgets, with the same 429s. Only once the request has
// passed every check (body, model, grants, inputs; gateway/jobs/starts.ts calls this last): a
// malformed request counts against nothing. The job's spend is not known here (it is priced and
// timed when its outputs are kept, activities/jobs.ts, which adds it to the budget counters), so
// the admission is released with nothing spent once the answer is sent.
import type { Response } from "express";
import type { Limiter } from "../auth/limiter.ts";
import type { JobOwner } from "../jobs/starts.ts";
import type { Authed } from "./context.ts";

/** The key of `req` as a job's owner, its limits admitting the job once every check has passed. */
export function jobOwner(limits: Limiter, req: Authed, res: Response): JobOwner {
  const key = req.key!;
  return {
    ...key,
    async admit() {
      const d = await limits.admit(key);
      if (d.refused) throw d.refused;
      res.on("close", () => d.release({ promptTokens: 0, completionTokens: 0, costMicros: 0 }));
    },
  };
}
