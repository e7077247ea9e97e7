// batchRun, `batch/<id>`: one /v1/batches batch. The run activity sends the lines through the
// gateway (heartbeating its progress, resuming after a worker restart without re-running a line
// whose answer is kept); a timer at the end of the completion window cancels it (lines not run are
// expired); the workflow's cancellation (POST /v1/batches/{id}/cancel) lets the lines in flight
// finish and keeps them. Whatever the ending, the output and error files are written.
import { CancellationScope, isCancellation, proxyActivities, sleep } from "@temporalio/workflow";
import type { Activities } from "../activities/index.ts";
import { BATCH_QUICK, BATCH_RUN } from "./activity-options.ts";
import type { BatchSpec } from "./batch-types.ts";

const quick = proxyActivities<Activities>(BATCH_QUICK);
const run = proxyActivities<Activities>(BATCH_RUN);

export async function batchRun(spec: BatchSpec): Promise<void> {
  try {
    await quick.batchBegin({ id: spec.id });
    let expired = false;
    const lines = new CancellationScope();
    const window = new CancellationScope();
    // Date.now() is the workflow's own (deterministic) clock.
    void window
      .run(() => sleep(Math.max(1, spec.expiresAtMs - Date.now())))
      .then(() => {
        expired = true;
        lines.cancel();
      })
      .catch(() => undefined);
    try {
      await lines.run(() => run.batchRunLines({ id: spec.id }));
    } catch (err) {
      if (!(expired && isCancellation(err))) throw err;
    } finally {
      window.cancel();
    }
    await quick.batchFinish({ id: spec.id, ending: expired ? "expired" : "completed" });
  } catch (err) {
    await CancellationScope.nonCancellable(() => quick.batchFinish({ id: spec.id, ending: isCancellation(err) ? "cancelled" : "failed", error: isCancellation(err) ? undefined : failureMessage(err) }));
    throw err;
  }
}

/** The innermost cause: what went wrong, not "activity task failed". */
function failureMessage(err: unknown): string {
  let e = err as { message?: string; cause?: unknown };
  while (e?.cause) e = e.cause as typeof e;
  return e?.message ?? String(err);
}
