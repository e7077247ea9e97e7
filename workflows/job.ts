// comfyJob, `job/<id>`: one picture, 3D or ComfyUI job. It waits its turn on the model's card
// (jobQueue), runs the graph on a ComfyUI replica (the activity heartbeats progress and resumes the
// same prompt after a worker restart, so it never runs twice to completion), stores the results.
// Cancelled, it takes the prompt out of ComfyUI's queue or interrupts it, then gives the card back.
// Failed or cancelled, the GPU time its prompt ran is charged (activities/jobs.ts chargeUnfinishedJob).
import {
  CancellationScope,
  condition,
  defineSignal,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
} from "@temporalio/workflow";
import type { Activities } from "../activities/index.ts";
import { JOB_QUICK, JOB_RUN } from "./activity-options.ts";
import { GRANTED_SIGNAL, RELEASE_SIGNAL, jobQueueWorkflowId, type JobResult, type JobSpec } from "./job-types.ts";

const grantedSignal = defineSignal(GRANTED_SIGNAL);

const quick = proxyActivities<Activities>(JOB_QUICK);
const run = proxyActivities<Activities>(JOB_RUN);

export async function comfyJob(spec: JobSpec): Promise<JobResult> {
  let granted = false;
  setHandler(grantedSignal, () => void (granted = true));
  const release = () => getExternalWorkflowHandle(jobQueueWorkflowId(spec.model)).signal(RELEASE_SIGNAL, { jobId: spec.id }).catch(() => undefined);
  try {
    await quick.enqueueJob({ model: spec.model, jobId: spec.id });
    await condition(() => granted);
    const outputs = await run.runComfyPrompt(spec);
    const result = await quick.storeJobOutputs({ spec, outputs });
    return result;
  } catch (err) {
    await CancellationScope.nonCancellable(async () => {
      if (isCancellation(err)) {
        if (granted) await quick.cancelComfyPrompt({ model: spec.model, jobId: spec.id });
        await quick.setJobState({ id: spec.id, state: "cancelled", progress: {} });
      } else {
        await quick.setJobState({ id: spec.id, state: "failed", progress: {}, error: failureMessage(err) });
      }
      // The GPU time its prompt ran is charged all the same (histories from before this charged nothing).
      if (granted && patched("charge-unfinished-jobs")) await quick.chargeUnfinishedJob({ spec, status: isCancellation(err) ? 499 : 500 });
    });
    throw err;
  } finally {
    await CancellationScope.nonCancellable(release);
  }
}

/** The innermost cause: what went wrong in the engine, not "activity task failed". */
function failureMessage(err: unknown): string {
  let e = err as { message?: string; cause?: unknown };
  while (e?.cause) e = e.cause as typeof e;
  return e?.message ?? String(err);
}
