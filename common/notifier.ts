// Raises notifications (common/notify-event.ts) onto their queue. A process sets its notifier once
// at start (the gateway, the Temporal worker); code that notices something calls `raise`, which
// never throws and never waits: a notification that cannot be queued is logged instead, as is every
// one raised where no notifier is set (tools, unit tests).
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { log } from "./logging.ts";
import { NOTIFY_DEDUPE_MS, NOTIFY_QUEUE, notification, type Notification, type NotifyKind } from "./notify-event.ts";

/** How many sent notifications the queue keeps to be listed (`llmgw ctl notify list`), and for how long. */
export const KEEP_SENT = { count: 500, age: 7 * 86_400 } as const;
/** Tries of a notification whose webhook fails, with exponential backoff from 2 s (about a day in all). */
export const NOTIFY_ATTEMPTS = 15;

export interface RaisedNotification {
  kind: NotifyKind;
  subject: string;
  summary: string;
  details?: Record<string, unknown>;
}

export class Notifier {
  readonly queue: Queue;

  constructor(connection: Redis) {
    this.queue = new Queue(NOTIFY_QUEUE, { connection });
    this.queue.on("error", (err) => log.debug("notify queue error", { error: err.message }));
  }

  /**
   * Queues it; with `dedupe` (the default) BullMQ drops it when the same kind and subject was raised
   * within the hour, and the id returned is then the earlier one's. Returns the job's id.
   */
  async add(n: RaisedNotification, opts: { dedupe?: boolean; attempts?: number } = {}): Promise<string> {
    const body: Notification = notification.parse({ ...n, details: n.details ?? {}, at: new Date().toISOString() });
    const dedupe = opts.dedupe ?? true;
    const job = await this.queue.add(n.kind, body, {
      attempts: opts.attempts ?? NOTIFY_ATTEMPTS,
      backoff: { type: "exponential", delay: 2_000 },
      removeOnComplete: KEEP_SENT,
      removeOnFail: KEEP_SENT,
      ...(dedupe && { deduplication: { id: `${n.kind}/${n.subject}`, ttl: NOTIFY_DEDUPE_MS } }),
    });
    return job.id!;
  }

  close(): Promise<void> {
    return this.queue.close();
  }
}

let current: Notifier | null = null;
/** When this process last raised each kind and subject: a repeat within the hour stops here, before Redis and the log. */
const raisedAt = new Map<string, number>();
/** Past this many remembered, those older than the hour are forgotten. */
const REMEMBER_MAX = 10_000;

/** The process's notifier for `raise`; null to unset (and forget what was raised). */
export function setNotifier(n: Notifier | null): void {
  current = n;
  raisedAt.clear();
}

/**
 * Raises a notification from wherever something was noticed, and logs it as an event. A repeat of
 * the same kind and subject within the hour is dropped here (a budget spent is noticed on every
 * refused request); another process's repeat is dropped by the queue (Notifier.add).
 */
export function raise(n: RaisedNotification, now = Date.now()): void {
  const key = `${n.kind}/${n.subject}`;
  const last = raisedAt.get(key);
  if (last !== undefined && now - last < NOTIFY_DEDUPE_MS) return;
  if (raisedAt.size >= REMEMBER_MAX) for (const [k, t] of raisedAt) if (now - t >= NOTIFY_DEDUPE_MS) raisedAt.delete(k);
  raisedAt.set(key, now);
  // What went well is news, not a warning.
  (n.kind === "adapter_published" || n.kind === "test" ? log.info : log.warn)(n.summary, { event: n.kind, subject: n.subject, ...n.details });
  if (!current) return;
  current.add(n).catch((err: unknown) => log.warn("notification not queued; logged only", { event: n.kind, subject: n.subject, error: (err as Error).message }));
}
