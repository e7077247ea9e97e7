// Runs inside the workflow sandbox (listed in the worker's workflowModules): tells the worker
// process, through a sink, when a workflow starts and how it ends. Sinks are not called during
// replay, so a workflow resumed on another worker is not counted twice.
import { ContinueAsNew, isCancellation, proxySinks, type Sinks, type WorkflowInterceptorsFactory } from "@temporalio/workflow";

export type WorkflowOutcome = "completed" | "failed" | "cancelled" | "continued";

export interface MetricsSinks extends Sinks {
  metrics: {
    started(): void;
    ended(outcome: WorkflowOutcome): void;
  };
}

const { metrics } = proxySinks<MetricsSinks>();

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async execute(input, next) {
        metrics.started();
        try {
          const result = await next(input);
          metrics.ended("completed");
          return result;
        } catch (err) {
          metrics.ended(err instanceof ContinueAsNew ? "continued" : isCancellation(err) ? "cancelled" : "failed");
          throw err;
        }
      },
    },
  ],
});
