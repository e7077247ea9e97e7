// Takes usage events off the hot path: buffered in memory and sent to BullMQ in batches. A batch
// that cannot be queued (Redis away) stays in the buffer and is tried again; nothing is dropped.
// Each event is costed here from the in-memory price book, so every endpoint's usage is priced.
import { randomUUID } from "node:crypto";
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { log } from "../../common/logging.ts";
import { USAGE_QUEUE, type UsageEvent } from "../../common/usage-event.ts";
import type { PriceBook } from "./price-book.ts";

export class UsageRecorder {
  private buffer: UsageEvent[] = [];
  private timer: NodeJS.Timeout;
  private flushing: Promise<void> | null = null;
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
    this.timer = setInterval(() => void this.flush(), flushMs);
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
    if (this.buffer.length === 0) return Promise.resolve();
    this.flushing = this.sendAll().finally(() => (this.flushing = null));
    return this.flushing;
  }

  private async sendAll(): Promise<void> {
    while (this.buffer.length > 0) {
      const events = this.buffer.slice(0, this.batchSize);
      try {
        await this.queue.add("batch", { events }, {
          jobId: randomUUID(),
          attempts: 1000,
          backoff: { type: "exponential", delay: 500 },
          removeOnComplete: 1000,
          removeOnFail: false,
        });
      } catch (err) {
        log.warn("usage batch not queued yet; kept to try again", { events: events.length, error: (err as Error).message });
        return;
      }
      this.buffer.splice(0, events.length);
      this.enqueued += events.length;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
    this.dropped += this.buffer.length;
    await this.queue.close();
  }
}
