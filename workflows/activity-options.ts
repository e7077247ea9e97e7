// Timeouts and retry policies of every activity the workflows call, in one place. Changing one
// changes how running workflows retry; the commands they issue stay the same, so histories replay.
import { ActivityCancellationType, type ActivityOptions } from "@temporalio/workflow";

/** Short store and agent calls of the model workflows (placing, starting, stopping, looking weights up). */
export const QUICK: ActivityOptions = {
  startToCloseTimeout: "30 seconds",
  retry: { initialInterval: "500 ms", maximumInterval: "10 seconds", maximumAttempts: 8 },
};

/**
 * Waiting for an engine can take long (weights load); the heartbeat, not the total, detects a
 * worker that died, so a retry on another worker follows within seconds.
 */
export const ENGINE_WAIT: ActivityOptions = {
  startToCloseTimeout: "20 minutes",
  heartbeatTimeout: "5 seconds",
  retry: { initialInterval: "1 second", maximumInterval: "10 seconds", maximumAttempts: 5 },
};

/** A weight fetch: days at most; `stallMs` without a heartbeat (no progress) and it is retried. */
export const weightFetch = (stallMs: number): ActivityOptions => ({
  startToCloseTimeout: "7 days",
  heartbeatTimeout: stallMs,
  retry: { initialInterval: "1 second", maximumInterval: "30 seconds", maximumAttempts: 6 },
});

/** Sending an adapter heartbeats per chunk; the engine's load can take minutes on a real GPU. */
export const ADAPTER_LOAD: ActivityOptions = {
  startToCloseTimeout: "15 minutes",
  heartbeatTimeout: "6 minutes",
  retry: { initialInterval: "1 second", maximumInterval: "10 seconds", maximumAttempts: 5 },
};

/** An on-demand model's idle checks and wake lookups: short, in the entity workflow itself. */
export const ON_DEMAND: ActivityOptions = {
  startToCloseTimeout: "10 seconds",
  retry: { initialInterval: "500 ms", maximumInterval: "10 seconds", maximumAttempts: 8 },
};

/** A node's drain: cordon, count, poll (retried without an end; the drain's own timeout ends it). */
export const DRAIN: ActivityOptions = { startToCloseTimeout: "30 seconds", retry: { maximumInterval: "10 seconds" } };

/** The fleet watch's look at the nodes (retried without an end: the watch runs forever). */
export const FLEET_WATCH: ActivityOptions = { startToCloseTimeout: "1 minute", retry: { maximumInterval: "10 seconds" } };

/** A job's bookkeeping (queue, files, status). */
export const JOB_QUICK: ActivityOptions = { startToCloseTimeout: "30 seconds", retry: { maximumAttempts: 10 } };

/** A job's run in its engine; its cancellation waits until the engine's queue has dropped it. */
export const JOB_RUN: ActivityOptions = {
  startToCloseTimeout: "2 hours",
  // A worker that dies mid-job is noticed within this and the prompt resumed on another.
  heartbeatTimeout: "5 seconds",
  retry: { maximumAttempts: 5, nonRetryableErrorTypes: ["JobFailed"] },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
};

/** A training run's bookkeeping. */
export const TRAINING_QUICK: ActivityOptions = {
  startToCloseTimeout: "1 minute",
  retry: { initialInterval: "500 ms", maximumInterval: "10 seconds", maximumAttempts: 10 },
};

/** Waiting for a free GPU: retried (NoRoom) for up to about an hour. */
export const TRAINING_PLACING: ActivityOptions = {
  startToCloseTimeout: "30 seconds",
  retry: { initialInterval: "1 second", maximumInterval: "10 seconds", maximumAttempts: 400 },
};

/** Following a training run to its end: days at most, heartbeating. */
export const TRAINING_FOLLOWING: ActivityOptions = {
  startToCloseTimeout: "7 days",
  heartbeatTimeout: "15 seconds",
  retry: { initialInterval: "1 second", maximumInterval: "10 seconds", maximumAttempts: 20 },
};

/** Slurm's short calls (scontrol, the store). */
export const SLURM_QUICK: ActivityOptions = {
  startToCloseTimeout: "45 seconds",
  retry: { initialInterval: "500 ms", maximumInterval: "10 seconds", maximumAttempts: 10 },
};

/** Waiting on Slurm (a node drained, its jobs ended): days at most, heartbeating. */
export const SLURM_WAITING: ActivityOptions = {
  startToCloseTimeout: "7 days",
  heartbeatTimeout: "10 seconds",
  retry: { initialInterval: "1 second", maximumInterval: "15 seconds" },
};

/** A batch's bookkeeping: starting, writing its output and error files. */
export const BATCH_QUICK: ActivityOptions = {
  startToCloseTimeout: "5 minutes",
  retry: { initialInterval: "1 second", maximumInterval: "30 seconds", maximumAttempts: 20 },
};

/**
 * A batch's lines: up to its 24 h window, heartbeating. A worker that dies is noticed within the
 * heartbeat timeout and the run resumes on another, skipping lines whose answers are kept.
 * Cancelled, it lets the lines in flight finish (WAIT_CANCELLATION_COMPLETED) and keeps them.
 */
export const BATCH_RUN: ActivityOptions = {
  startToCloseTimeout: "25 hours",
  heartbeatTimeout: "10 seconds",
  retry: { initialInterval: "1 second", maximumInterval: "30 seconds", maximumAttempts: 50, nonRetryableErrorTypes: ["BatchFailed"] },
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
};
