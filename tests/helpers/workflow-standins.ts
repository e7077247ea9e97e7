// The workflows on the real Temporal server with stand-in activities: one bundle of workflows/, a
// worker connection and a client for a test file. Only the workflows are under test there.
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import type { WorkflowHandle } from "@temporalio/client";
import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode, type WorkflowBundle } from "@temporalio/worker";
import { config } from "../../common/config.ts";
import { temporalClient } from "../../common/temporal.ts";

export interface StandInEnv {
  bundle: WorkflowBundle;
  connection: NativeConnection;
  temporal: Awaited<ReturnType<typeof temporalClient>>;
  /** A fresh task queue's workers: `activities` stand in for the real ones; no workflow cache when `cold`. */
  workers(taskQueue: string, activities: object, opts?: { cold?: boolean }): Promise<{ activities: Worker; workflows: () => Promise<Worker> }>;
  close(): Promise<void>;
}

export async function standInEnv(): Promise<StandInEnv> {
  // Its workers are made and stopped on purpose: their start and stop warnings say nothing here.
  Runtime.install({ logger: new DefaultLogger("ERROR") });
  const bundle = await bundleWorkflowCode({ workflowsPath: fileURLToPath(new URL("../../workflows/index.ts", import.meta.url)), logger: new DefaultLogger("WARN") });
  const connection = await NativeConnection.connect({ address: config().TEMPORAL_ADDRESS });
  const temporal = await temporalClient();
  const namespace = config().LLMGW_TEMPORAL_NAMESPACE;
  return {
    bundle,
    connection,
    temporal,
    async workers(taskQueue, activities, opts = {}) {
      return {
        activities: await Worker.create({ connection, namespace, taskQueue, activities }),
        workflows: () => Worker.create({ connection, namespace, taskQueue, workflowBundle: bundle, ...(opts.cold && { maxCachedWorkflows: 0 }) }),
      };
    },
    async close() {
      await connection.close();
      await temporal.close();
    },
  };
}

export const uniqueQueue = (what: string): string => `${what}-${randomUUID()}`;

/** The kind of each event of a history: "workflowTaskStarted" and so on. */
export function eventKinds(history: Awaited<ReturnType<WorkflowHandle["fetchHistory"]>>): (string | undefined)[] {
  return history.events!.map((e) => Object.keys(e).find((k) => k.endsWith("EventAttributes") && e[k as keyof typeof e] != null)?.replace("EventAttributes", ""));
}
