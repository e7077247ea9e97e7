// The worker's Prometheus metrics: workflows by type and outcome (from the sandbox through a sink),
// activities by duration and retry (an activity interceptor), usage batches written and how far the
// ledger lags behind the requests (the usage consumer), and the BullMQ queue's jobs by state.
import type { Context as ActivityContext } from "@temporalio/activity";
import type { Queue } from "bullmq";
import type { ActivityInterceptors, InjectedSinks, WorkerInterceptors } from "@temporalio/worker";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { codePath } from "../common/code-paths.ts";
import { collectProcessMetrics } from "../common/metrics-server.ts";
import type { MetricsSinks, WorkflowOutcome } from "./workflow-metrics.ts";

const QUEUE_STATES = ["waiting", "active", "delayed", "failed", "completed"] as const;

export class WorkerMetrics {
  readonly registry = new Registry();
  private wfStarted = new Counter({ name: "llmgw_workflow_started_total", help: "Workflow executions started on this worker, by type", labelNames: ["type"], registers: [this.registry] });
  private wfCompleted = new Counter({ name: "llmgw_workflow_completed_total", help: "Workflow executions completed (or continued as new), by type", labelNames: ["type", "outcome"], registers: [this.registry] });
  private wfFailed = new Counter({ name: "llmgw_workflow_failed_total", help: "Workflow executions failed or cancelled, by type", labelNames: ["type", "outcome"], registers: [this.registry] });
  private actDuration = new Histogram({
    name: "llmgw_activity_duration_seconds",
    help: "Activity attempts by type and outcome",
    labelNames: ["activity", "outcome"],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800],
    registers: [this.registry],
  });
  private actRetries = new Counter({ name: "llmgw_activity_retries_total", help: "Activity attempts after the first, by type", labelNames: ["activity"], registers: [this.registry] });
  private batches = new Counter({ name: "llmgw_usage_batches_written_total", help: "Usage batches written to the ledger", registers: [this.registry] });
  private events = new Counter({ name: "llmgw_usage_events_written_total", help: "Usage events written to the ledger (redeliveries not counted twice)", registers: [this.registry] });
  private batchFailures = new Counter({ name: "llmgw_usage_batch_failures_total", help: "Usage batch writes that failed and will be retried", registers: [this.registry] });
  private lag = new Gauge({ name: "llmgw_usage_lag_seconds", help: "Age of the oldest event in the last batch written: how far the ledger trails requests", registers: [this.registry] });
  private queue: Queue | null = null;

  constructor() {
    collectProcessMetrics(this.registry, "llmgw_worker_");
    const queue = () => this.queue;
    new Gauge({
      name: "llmgw_usage_queue_jobs",
      help: "Usage batches in the BullMQ queue, by state",
      labelNames: ["state"],
      registers: [this.registry],
      async collect() {
        this.reset();
        const q = queue();
        if (!q) return;
        const counts = await q.getJobCounts(...QUEUE_STATES).catch(() => null);
        if (counts) for (const s of QUEUE_STATES) this.set({ state: s }, counts[s] ?? 0);
      },
    });
  }

  /** The usage queue whose job counts are exported. */
  watchQueue(q: Queue): void {
    this.queue = q;
  }

  batchWritten(written: number, oldestAt: number, now = Date.now()): void {
    this.batches.inc();
    this.events.inc(written);
    this.lag.set(Math.max(0, (now - oldestAt) / 1000));
  }

  batchFailed(): void {
    this.batchFailures.inc();
  }

  workflowEnded(type: string, outcome: WorkflowOutcome): void {
    if (outcome === "completed" || outcome === "continued") this.wfCompleted.inc({ type, outcome });
    else this.wfFailed.inc({ type, outcome });
  }

  /** The sinks the workflow interceptor (workflow-metrics.ts) calls. */
  sinks(): InjectedSinks<MetricsSinks> {
    return {
      metrics: {
        started: { fn: (info) => this.wfStarted.inc({ type: info.workflowType }) },
        ended: { fn: (info, outcome) => this.workflowEnded(info.workflowType, outcome) },
      },
    };
  }

  /** Worker.create's interceptors: the sandbox module and the activity interceptor. */
  interceptors(): WorkerInterceptors {
    return {
      workflowModules: [codePath("workers/workflow-metrics.ts")],
      activity: [(ctx) => this.activityInterceptor(ctx)],
    };
  }

  private activityInterceptor(ctx: ActivityContext): ActivityInterceptors {
    return {
      inbound: {
        execute: async (input, next) => {
          const activity = ctx.info.activityType;
          if (ctx.info.attempt > 1) this.actRetries.inc({ activity });
          const end = this.actDuration.startTimer({ activity });
          try {
            const result = await next(input);
            end({ outcome: "ok" });
            return result;
          } catch (err) {
            end({ outcome: "error" });
            throw err;
          }
        },
      },
    };
  }
}
