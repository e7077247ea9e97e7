// What a /v1/batches batch carries from the gateway to its workflow and activities.

export interface BatchSpec {
  id: string;
  /** When the completion window ends (ms since the epoch): lines not run by then are expired. */
  expiresAtMs: number;
}

/** How a batch's run ended; the batch's status becomes this. */
export type BatchEnding = "completed" | "failed" | "expired" | "cancelled";

/** Progress as the run activity heartbeats it (visible in the Temporal UI's pending activity). */
export interface BatchProgress {
  total: number;
  completed: number;
  failed: number;
}

export const batchWorkflowId = (id: string) => `batch/${id}`;

/** Statuses before the end, as OpenAI names them. */
export const BATCH_ACTIVE = ["validating", "in_progress", "finalizing", "cancelling"];
