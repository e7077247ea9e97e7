// The notifications worker: takes raised notifications (common/notifier.ts) off their queue and
// posts each to every webhook (workers/webhooks.ts). A webhook that fails gets the notification
// again with the job's retries (exponential backoff, about a day); one that took it is not sent it
// twice, as the job's progress records who has it. With no webhooks file the notification is
// recorded as sent to nobody: `llmgw ctl notify list` still shows it.
import { Worker, type Job } from "bullmq";
import { config } from "../common/config.ts";
import { log } from "../common/logging.ts";
import { NOTIFY_QUEUE, notification, type Delivery, type NotifyProgress } from "../common/notify-event.ts";
import { redis } from "../common/redis.ts";
import { readOrCreateSecret } from "../common/secrets.ts";
import { deliver, readWebhooks } from "./webhooks.ts";

/** Notifications sent at once. */
const CONCURRENCY = 4;

export async function runNotifyWorker(): Promise<{ shutdown(): Promise<void> }> {
  const c = config();
  const file = c.LLMGW_NOTIFY_WEBHOOKS_FILE;
  // A file that cannot be read is said at start, but does not stop this process: the usage ledger
  // runs beside it. Each notification fails (and is retried) until the file reads.
  let count: number | string;
  try {
    count = readWebhooks(file).length;
  } catch (err) {
    count = "unreadable";
    log.error("the webhooks file cannot be read; notifications wait until it can", { error: (err as Error).message });
  }
  const secret = readOrCreateSecret(c.dataDir, "notify-secret", c.LLMGW_NOTIFY_SECRET);
  const connection = redis(c.redisUrl);
  const worker = new Worker(
    NOTIFY_QUEUE,
    async (job: Job) => {
      const n = { ...notification.parse(job.data), id: job.id! };
      const had = typeof job.progress === "object" ? ((job.progress as Partial<NotifyProgress>).deliveries ?? []) : [];
      const taken = new Set(had.filter((d) => d.ok).map((d) => d.webhook));
      const fresh = await Promise.all(readWebhooks(file).filter((w) => !taken.has(w.ref)).map((w) => deliver(w, n, secret)));
      const deliveries: Delivery[] = [...had.filter((d) => d.ok), ...fresh];
      await job.updateProgress({ deliveries } satisfies NotifyProgress);
      const failed = fresh.filter((d) => !d.ok);
      if (failed.length) throw new Error(failed.map((d) => `${d.webhook} ${d.error}`).join("; "));
      return { deliveries };
    },
    { connection, concurrency: CONCURRENCY },
  );
  worker.on("failed", (job, err) => log.warn("notification not sent everywhere; it will be tried again", { job: job?.id, kind: job?.name, attempt: job?.attemptsMade, error: err.message }));
  log.info("notify worker running", { queue: NOTIFY_QUEUE, webhooks: count });
  return {
    async shutdown() {
      await worker.close();
      connection.disconnect();
    },
  };
}
