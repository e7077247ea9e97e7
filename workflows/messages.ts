// Updates and queries of the model workflows. Kept apart from the workflow code so the admin API
// can name them without importing workflow code.
import { defineQuery, defineUpdate } from "@temporalio/workflow";
import type { ModelState, OperationProgress, ServeCommand } from "./model-types.ts";

export const serveUpdate = defineUpdate<{ operationId: string }, [ServeCommand]>("serve");
export const stateQuery = defineQuery<ModelState>("state");
export const progressQuery = defineQuery<OperationProgress>("progress");
