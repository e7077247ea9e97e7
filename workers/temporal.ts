// The Temporal worker: runs workflows/ and activities/ on the task queue.
import os from "node:os";
import path from "node:path";
import { NativeConnection, Worker } from "@temporalio/worker";
import { createActivities } from "../activities/index.ts";
import { closeAgentClients } from "../activities/deps.ts";
import { closeSlurmClients } from "../activities/slurm.ts";
import { closeTrainClients } from "../activities/training.ts";
import { closeAdapterClients } from "../activities/adapters.ts";
import { codePath, repoPath } from "../common/code-paths.ts";
import { config } from "../common/config.ts";
import { closePrisma, prisma } from "../common/db.ts";
import { describeTemporalConnection, temporalConnectionOptions } from "../common/temporal-connection.ts";
import { log } from "../common/logging.ts";
import { Notifier, setNotifier } from "../common/notifier.ts";
import { redis } from "../common/redis.ts";
import { readOrCreateSecret } from "../common/secrets.ts";
import { controlPlaneTlsFromConfig } from "../common/tls/control-plane.ts";
import type { WorkerMetrics } from "./metrics.ts";
import { jobsTaskQueue } from "../workflows/job-types.ts";
import { ensureFleetWatch } from "./fleet-watch-start.ts";
import { cachedWorkflowBundle } from "./workflow-bundle.ts";

function bundleDir(setting: string | undefined): string | null {
  if (setting !== undefined) return setting === "" ? null : path.resolve(setting);
  return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "llmgw", "workflow-bundles");
}

export async function runTemporalWorker(metrics?: WorkerMetrics): Promise<{ done: Promise<void>; shutdown(): void }> {
  const c = config();
  const r = redis();
  const db = prisma();
  const clusterToken = readOrCreateSecret(c.dataDir, "cluster-token", c.LLMGW_CLUSTER_TOKEN);
  // Activities call agents as spiffe://llmgw/control, a certificate issued here from the cluster CA.
  const tls = await controlPlaneTlsFromConfig(c, db, clusterToken);
  const deps = { db, redis: r, clusterToken, tls, nodeFreshMs: c.LLMGW_NODE_LOST_MS };
  // The activities raise notifications (a node lost) through it.
  const notifier = new Notifier(r);
  setNotifier(notifier);
  const temporalOptions = temporalConnectionOptions(c);
  const connection = await NativeConnection.connect(temporalOptions);
  // One bundle for both workers, from the cache when these sources were bundled before:
  // bundling (webpack) is most of a worker's start time.
  const workflowBundle = await cachedWorkflowBundle({
    workflowsPath: codePath("workflows/index.ts"),
    interceptorModules: metrics?.interceptors().workflowModules ?? [],
    lockFile: repoPath("package-lock.json"),
    cacheDir: bundleDir(c.LLMGW_WORKFLOW_BUNDLE_DIR),
  });
  const worker = await Worker.create({
    connection,
    namespace: c.LLMGW_TEMPORAL_NAMESPACE,
    taskQueue: c.LLMGW_TASK_QUEUE,
    workflowBundle,
    activities: createActivities(deps),
    ...(metrics && { interceptors: metrics.interceptors(), sinks: metrics.sinks() }),
  });
  // Picture, 3D and ComfyUI jobs on their own queue, so minutes-long jobs never hold up serving.
  // At most LLMGW_JOBS_MAX run at once in the whole cluster (a Redis semaphore, activities/jobs.ts);
  // a job waiting for a slot holds an activity slot here, hence Temporal's default of 100.
  const jobsWorker = await Worker.create({
    connection,
    namespace: c.LLMGW_TEMPORAL_NAMESPACE,
    taskQueue: jobsTaskQueue(c.LLMGW_TASK_QUEUE),
    workflowBundle,
    activities: createActivities(deps),
    // Cancellation reaches a running job with its next heartbeat: within a second, not 0.8 × timeout.
    maxHeartbeatThrottleInterval: "1 second",
  });
  await ensureFleetWatch();
  log.info("temporal worker running", { taskQueue: c.LLMGW_TASK_QUEUE, namespace: c.LLMGW_TEMPORAL_NAMESPACE, temporal: describeTemporalConnection(temporalOptions) });
  const done = Promise.all([worker.run(), jobsWorker.run()]).then(() => undefined).finally(async () => {
    closeAgentClients();
    closeSlurmClients();
    closeTrainClients();
    closeAdapterClients();
    tls?.close();
    setNotifier(null);
    await notifier.close();
    r.disconnect();
    await closePrisma();
    await connection.close();
  });
  return {
    done,
    shutdown: () => {
      worker.shutdown();
      jobsWorker.shutdown();
    },
  };
}
