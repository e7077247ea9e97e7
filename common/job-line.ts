// Puts a job in its model's line (the jobQueue workflow `job-queue/<model>`, started if none runs).
// Idempotent on the job id. The gateway calls it as it answers 202, so jobs keep the order in which
// they were accepted; the job workflow calls it again as its first step (an activity), so a job
// whose first call failed still joins the line.
import type { Client } from "@temporalio/client";
import { ENQUEUE_SIGNAL, jobQueueWorkflowId, jobsTaskQueue } from "../workflows/job-types.ts";

export async function joinJobLine(client: Client, baseTaskQueue: string, model: string, jobId: string): Promise<void> {
  await client.workflow.signalWithStart("jobQueue", {
    workflowId: jobQueueWorkflowId(model),
    taskQueue: jobsTaskQueue(baseTaskQueue),
    args: [{ holder: null, waiting: [] }],
    signal: ENQUEUE_SIGNAL,
    signalArgs: [{ jobId }],
  });
}
