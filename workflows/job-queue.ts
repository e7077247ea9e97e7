// jobQueue, `job-queue/<model>`: lets one job at a time use a model's card, in arrival order.
// Jobs arrive by signal-with-start (activity enqueueJob) and leave by the release signal; a job
// cancelled while waiting also releases, which removes it from the line.
import { condition, continueAsNew, defineQuery, defineSignal, getExternalWorkflowHandle, setHandler } from "@temporalio/workflow";
import { ENQUEUE_SIGNAL, GRANTED_SIGNAL, RELEASE_SIGNAL, jobWorkflowId } from "./job-types.ts";

export const enqueueSignal = defineSignal<[{ jobId: string }]>(ENQUEUE_SIGNAL);
export const releaseSignal = defineSignal<[{ jobId: string }]>(RELEASE_SIGNAL);
export const lineQuery = defineQuery<{ holder: string | null; waiting: string[] }>("line");

/** Idle this long with nobody waiting, the queue workflow ends; the next job starts a new one. */
const IDLE = "1 minute";

export async function jobQueue(state: { holder: string | null; waiting: string[] } = { holder: null, waiting: [] }): Promise<void> {
  let { holder } = state;
  const waiting = [...state.waiting];
  setHandler(enqueueSignal, ({ jobId }) => {
    if (jobId !== holder && !waiting.includes(jobId)) waiting.push(jobId);
  });
  setHandler(releaseSignal, ({ jobId }) => {
    if (holder === jobId) holder = null;
    const at = waiting.indexOf(jobId);
    if (at >= 0) waiting.splice(at, 1);
  });
  setHandler(lineQuery, () => ({ holder, waiting }));

  for (let grants = 0; grants < 200; ) {
    if (holder === null && waiting.length) {
      holder = waiting.shift()!;
      grants++;
      try {
        await getExternalWorkflowHandle(jobWorkflowId(holder)).signal(GRANTED_SIGNAL);
      } catch {
        holder = null; // the job is gone: the next one
      }
      continue;
    }
    const busy = await condition(() => holder === null && waiting.length > 0, holder === null ? IDLE : "1 hour");
    if (!busy && holder === null && waiting.length === 0) return;
  }
  await continueAsNew<typeof jobQueue>({ holder, waiting });
}
