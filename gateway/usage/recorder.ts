// Takes usage events off the hot path: buffered in memory and sent to BullMQ in batches. A batch
// that cannot be queued (Redis away) stays in the buffer and is tried again; nothing is dropped.
// While Redis is away the connection holds the send until it is back; the buffer meanwhile grows
// (llmgw_usage_events_pending) and a warning is logged every few seconds, never a failed request.
// Each event is costed here from the in-memory price book, so every endpoint's usage is priced.
import { randomUUID } from "node:crypto";
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { log } from "../../common/logging.ts";
import { USAGE_ATTEMPTS, USAGE_BACKOFF, USAGE_QUEUE, type UsageEvent } from "../../common/usage-event.ts";
import type { PriceBook } from "./price-book.ts";

/** How long a send may hang (Redis away) before the recorder says so, and again at this interval. */
const STUCK_WARN_MS = 5_000;
/** How long close() waits for a last send before counting what is left as dropped. */
const CLOSE_WAIT_MS = 5_000;
/**
 * What of a batch is kept in Redis once the ledger holds it: the last hundred, for an hour, to look
 * at. Each holds its events (85 KB of JSON at 200, measured), which the ledger has too: a thousand
 * would be ~85 MB of Redis memory under steady load (worked out), rewritten at every snapshot and AOF rewrite.
 * A batch that failed is kept until someone looks (removeOnFail: false).
 */
export const KEEP_WRITTEN_BATCHES = { count: 100, age: 3600 } as const;

export class UsageRecorder {
  private buffer: UsageEvent[] = [];
  private timer: NodeJS.Timeout;
  private flushing: Promise<void> | null = null;
  /** When the current send began to be stuck or failing (0: it is not), and when that was last logged. */
  private troubleSince = 0;
  private warnedAt = 0;
  private readonly queue: Queue;
  enqueued = 0;
  /** Events still buffered when the recorder closed (Redis away at shutdown): lost, so counted. */
  dropped = 0;

  constructor(
    connection: Redis,
    private readonly batchSize: number,
    flushMs: number,
    private readonly prices: PriceBook | null = null,
  ) {
    this.queue = new Queue(USAGE_QUEUE, { connection });
    // Connection errors come once per reconnect attempt; warnIfStuck reports the outage instead.
    this.queue.on("error", (err) => log.debug("usage queue error", { error: err.message }));
    this.timer = setInterval(() => {
      this.warnIfStuck();
      void this.flush();
    }, flushMs);
    this.timer.unref();
  }

  /** Queues the event with its cost filled in (when the caller left it 0) and returns it. */
  record(e: UsageEvent): UsageEvent {
    const event = e.costMicros === 0 && this.prices ? { ...e, costMicros: this.prices.cost(e.model, e) } : e;
    this.buffer.push(event);
    if (this.buffer.length >= this.batchSize) void this.flush();
    return event;
  }

  pending(): number {
    return this.buffer.length;
  }

  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.buffer.length === 0 && this.troubleSince) this.recovered();
    if (this.buffer.length === 0) return Promise.resolve();
    this.flushing = this.sendAll().finally(() => (this.flushing = null));
    return this.flushing;
  }

  private async sendAll(): Promise<void> {
    while (this.buffer.length > 0) {
      const events = this.buffer.slice(0, this.batchSize);
      const started = Date.now();
      try {
        // A fresh job id per try: a batch queued twice (an answer lost on the way back) is
        // harmless, the worker writes each event once by its id.
        await this.queue.add("batch", { events }, {
          jobId: randomUUID(),
          attempts: USAGE_ATTEMPTS,
          backoff: USAGE_BACKOFF,
          removeOnComplete: KEEP_WRITTEN_BATCHES,
          removeOnFail: false,
        });
      } catch (err) {
        this.troubleSince ||= started;
        log.warn("usage batch not queued yet; kept to try again", { events: events.length, pending: this.buffer.length, error: (err as Error).message });
        this.warnedAt = Date.now();
        return;
      }
      this.buffer.splice(0, events.length);
      this.enqueued += events.length;
    }
    if (this.troubleSince) this.recovered();
  }

  /** A send hanging on an unreachable Redis neither resolves nor fails: say so from the timer. */
  private warnIfStuck(): void {
    if (!this.flushing) return;
    const now = Date.now();
    this.troubleSince ||= now;
    if (now - this.troubleSince < STUCK_WARN_MS || now - this.warnedAt < STUCK_WARN_MS) return;
    this.warnedAt = now;
    log.warn("usage queue unreachable; events kept in memory", { pending: this.buffer.length, forMs: now - this.troubleSince });
  }

  private recovered(): void {
    if (this.warnedAt) log.info("usage queue reachable again; buffered events queued", { forMs: Date.now() - this.troubleSince });
    this.troubleSince = 0;
    this.warnedAt = 0;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    let wait: NodeJS.Timeout | undefined;
    await Promise.race([this.flush(), new Promise<void>((resolve) => (wait = setTimeout(resolve, CLOSE_WAIT_MS)))]);
    clearTimeout(wait);
    this.dropped += this.buffer.length;
    if (this.dropped) log.error("usage events lost at shutdown: Redis unreachable", { events: this.dropped });
    await Promise.race([this.queue.close(), new Promise<void>((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())]);
  }
}
