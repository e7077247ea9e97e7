// Updates and queries of the model workflows. Kept apart from the workflow code so the admin API
// can name them without importing workflow code.
import { defineQuery, defineSignal, defineUpdate } from "@temporalio/workflow";
import type { WakeCommand } from "./on-demand-types.ts";
import type { PublishCommand } from "./model-types.ts";
import type { CanaryCommand, EvacuateCommand, FetchProgressReport, ModelState, OperationProgress, ServeCommand, UpgradeCommand } from "./model-types.ts";

export const serveUpdate = defineUpdate<{ operationId: string }, [ServeCommand]>("serve");
export const stateQuery = defineQuery<ModelState>("state");
export const progressQuery = defineQuery<OperationProgress>("progress");
export const upgradeUpdate = defineUpdate<{ operationId: string }, [UpgradeCommand]>("upgrade");

/** A weight fetch's progress, sent by the fetch activity to the workflow that runs it. */
export const fetchProgressSignal = defineSignal<[FetchProgressReport]>("fetchProgress");

/** Steering a running operation (sent to the operation's own workflow). */
export const pauseSignal = defineSignal("pause");
export const resumeSignal = defineSignal("resume");
export const abortSignal = defineSignal("abort");

/** Sent to model/<name> by node drains and the fleet watch. */
export const evacuateSignal = defineSignal<[EvacuateCommand]>("evacuate");
/** Sent to model/<name> when one of its replicas died: serve the desired state again. */
export const repairSignal = defineSignal<[{ reason: string }]>("repair");
export const canaryUpdate = defineUpdate<{ operationId: string }, [CanaryCommand]>("canary");
/** A canary promoted now, without waiting for its windows. */
export const promoteSignal = defineSignal("promote");
/** Sent to model/<name> by a gateway holding a request for a sleeping on-demand model. */
export const wakeSignal = defineSignal<[WakeCommand]>("wake");
/** Sent to model/<name> when its live settings change: an on-demand model's idle watch starts. */
export const settingsSignal = defineSignal("settings");
/** A LoRA adapter published to the model: loaded onto its replicas one at a time. */
export const publishUpdate = defineUpdate<{ operationId: string }, [PublishCommand]>("publish");
