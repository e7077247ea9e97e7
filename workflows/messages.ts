// Updates and queries of the model workflows. Kept apart from the workflow code so the admin API
// can name them without importing workflow code.
import { defineQuery, defineSignal, defineUpdate } from "@temporalio/workflow";
import type { CanaryCommand, EvacuateCommand, ModelState, OperationProgress, ServeCommand, UpgradeCommand } from "./model-types.ts";

export const serveUpdate = defineUpdate<{ operationId: string }, [ServeCommand]>("serve");
export const stateQuery = defineQuery<ModelState>("state");
export const progressQuery = defineQuery<OperationProgress>("progress");
export const upgradeUpdate = defineUpdate<{ operationId: string }, [UpgradeCommand]>("upgrade");

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
