// Asks an on-demand model's entity workflow (`model/<name>`, started if the model was never served)
// to wake it, and notes a use of the model for its idle watch. The gateway's Waker asks for a waiting
// request (gateway/router/wake.ts); the job activities for a job that waits for a replica or runs
// (activities/job-wake.ts), so /v1 picture, 3D and workflow jobs wake a sleeping model too.
import type { Client } from "@temporalio/client";
import type { Redis } from "ioredis";
import { wakeSignal } from "../workflows/messages.ts";
import { modelWorkflowId, newModelState } from "../workflows/model-types.ts";
import { lastRequestKey } from "../workflows/on-demand-types.ts";
import { operationSearchAttributes } from "../workflows/search-attributes.ts";

/** The last-use note outlives any sensible idle_after, then goes (a removed model leaves nothing behind). */
const LAST_USE_TTL_S = 7 * 24 * 3600;

export async function askModelToWake(client: Client, taskQueue: string, model: string, reason: string): Promise<void> {
  await client.workflow.signalWithStart("modelEntity", {
    workflowId: modelWorkflowId(model),
    taskQueue,
    args: [newModelState(model)],
    signal: wakeSignal,
    signalArgs: [{ reason }],
    typedSearchAttributes: operationSearchAttributes(model, "model"),
    memo: { summary: `model ${model}: desired state and its operations` },
  });
}

/** Notes that `model` was used now: its idle watch counts idle time from the latest note. */
export async function noteModelUse(redis: Redis, model: string, at = Date.now()): Promise<void> {
  await redis.set(lastRequestKey(model), String(at), "EX", LAST_USE_TTL_S);
}
