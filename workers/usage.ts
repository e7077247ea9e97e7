// The usage worker: takes batches of usage events off BullMQ and writes them to the ledger.
// Writing with ON CONFLICT DO NOTHING on the event id (usage-ledger.ts) makes a redelivered batch harmless, so a batch is
// retried for as long as the store is away and re-run however often this worker dies mid-batch.
import { Queue, Worker } from "bullmq";
import pg from "pg";
import { config } from "../common/config.ts";
import { log } from "../common/logging.ts";
import { redis } from "../common/redis.ts";
import { USAGE_QUEUE, usageBackoffMs, usageBatch } from "../common/usage-event.ts";
import type { WorkerMetrics } from "./metrics.ts";
import { writeUsageBatch } from "./usage-ledger.ts";

/** Batches written at once. */
const CONCURRENCY = 4;

export async function runUsageWorker(metrics?: WorkerMetrics): Promise<{ done: Promise<void>; shutdown(): Promise<void> }> {
  // node-postgres straight, one connection per concurrent batch (usage-ledger.ts says why not Prisma).
  const db = new pg.Pool({ connectionString: config().databaseUrl, max: CONCURRENCY });
  db.on("error", (err) => log.warn("usage ledger connection lost", { error: err.message }));
  const connection = redis(config().redisUrl);
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const worker = new Worker(
    USAGE_QUEUE,
    async (job) => {
      const { events } = usageBatch.parse(job.data);
      const written = await writeUsageBatch(db, events);
      metrics?.batchWritten(written, Math.min(...events.map((e) => Date.parse(e.at))));
      return { written, received: events.length };
    },
    {
      connection,
      concurrency: CONCURRENCY,
      settings: { backoffStrategy: (attemptsMade: number) => usageBackoffMs(attemptsMade) },
      // A batch whose worker died (killed, lost its lock) goes back to waiting, not to `failed`
      // after its first stall: writing it again is harmless.
      maxStalledCount: 1000,
    },
  );
  // Its job counts only (the metrics); the gateways add the jobs.
  const queue = new Queue(USAGE_QUEUE, { connection });
  metrics?.watchQueue(queue);
  worker.on("failed", () => metrics?.batchFailed());
  worker.on("failed", (job, err) => log.warn("usage batch failed; it will be retried", { job: job?.id, error: err.message }));
  log.info("usage worker running", { queue: USAGE_QUEUE });
  return {
    done,
    async shutdown() {
      await worker.close();
      await queue.close();
      connection.disconnect();
      await db.end();
      finished();
    },
  };
}
