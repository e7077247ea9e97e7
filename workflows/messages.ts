// Updates and queries of the model workflows. Kept apart from the workflow code so the admin API
// can name them without importing workflow code.
import { defineQuery, defineSignal, defineUpdate } from "@temporalio/workflow";
import type { ModelState, OperationProgress, ServeCommand, UpgradeCommand } from "./model-types.ts";

export const serveUpdate = defineUpdate<{ operationId: string }, [ServeCommand]>("serve");
export const stateQuery = defineQuery<ModelState>("state");
export const progressQuery = defineQuery<OperationProgress>("progress");
export const upgradeUpdate = defineUpdate<{ operationId: string }, [UpgradeCommand]>("upgrade");

/** Steering a running operation (sent to the operation's own workflow). */
export const pauseSignal = defineSignal("pause");
export const resumeSignal = defineSignal("resume");
export const abortSignal = defineSignal("abort");
