// Takes usage events off the hot path: journaled in Redis (journal.ts: one XADD the answer's last
// byte waits for, so a SIGKILLed gateway loses nothing), buffered in memory and sent to BullMQ in
// batches, then deleted from the journal. A batch
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
import { JOURNAL_ALIVE_MS, UsageJournal, type KeptWith } from "./journal.ts";

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

/** A buffered event and its journal entry (null until Redis has answered the append). */
interface Entry {
  event: UsageEvent;
  jid: string | null;
  queued: boolean;
}

/** How often this gateway says it is alive and looks for dead gateways' journals. */
const BEAT_MS = JOURNAL_ALIVE_MS / 4;

export class UsageRecorder {
  private buffer: Entry[] = [];
  private timer: NodeJS.Timeout;
  private beatTimer: NodeJS.Timeout;
  /** Resolved and replaced at every flush tick: bounds how long an answer waits on a stuck Redis. */
  private tick!: Promise<void>;
  private tock!: () => void;
  private flushing: Promise<void> | null = null;
  /** When the current send began to be stuck or failing (0: it is not), and when that was last logged. */
  private troubleSince = 0;
  private warnedAt = 0;
  private readonly queue: Queue;
  readonly journal: UsageJournal;
  enqueued = 0;
  /** Events queued from dead gateways' journals. */
  drained = 0;
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
    this.journal = new UsageJournal(connection);
    this.newTick();
    this.timer = setInterval(() => {
      this.tock();
      this.newTick();
      this.warnIfStuck();
      void this.flush();
    }, flushMs);
    this.timer.unref();
    this.beatTimer = setInterval(() => void this.beat(), BEAT_MS);
    this.beatTimer.unref();
    void this.beat();
  }

  private newTick(): void {
    this.tick = new Promise<void>((resolve) => (this.tock = resolve));
  }

  /** Alive, and any dead gateway's journal queued (at start and every few seconds). */
  private async beat(): Promise<void> {
    try {
      await this.journal.beat();
      this.drained += await this.journal.drainDead((events) => this.send(events));
    } catch (err) {
      log.debug("usage journal beat failed", { error: (err as Error).message });
    }
  }

  /**
   * Queues the event with its cost filled in (when the caller left it 0). `journaled` resolves once
   * Redis holds it, or after a flush tick or two if Redis is away (the event stays in memory then,
   * as before the journal: an answer is never failed or held long for usage).
   */
  record(e: UsageEvent, also?: KeptWith): { event: UsageEvent; journaled: Promise<void> } {
    const event = e.costMicros === 0 && this.prices ? { ...e, costMicros: this.prices.cost(e.model, e, Boolean(e.batchId)) } : e;
    const entry: Entry = { event, jid: null, queued: false };
    this.buffer.push(entry);
    const appended = this.journal.append(JSON.stringify(event), also).then(
      (jid) => {
        // Queued before Redis answered (rare): its entry goes now.
        if (entry.queued && jid) void this.journal.remove([jid]).catch(() => undefined);
        else entry.jid = jid;
      },
      (err: Error) => log.debug("usage journal append failed; the event is kept in memory", { error: err.message }),
    );
    if (this.buffer.length >= this.batchSize) void this.flush();
    return { event, journaled: Promise.race([appended, this.tick]) };
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
      const entries = this.buffer.slice(0, this.batchSize);
      const started = Date.now();
      try {
        await this.send(entries.map((x) => x.event));
      } catch (err) {
        this.troubleSince ||= started;
        log.warn("usage batch not queued yet; kept to try again", { events: entries.length, pending: this.buffer.length, error: (err as Error).message });
        this.warnedAt = Date.now();
        return;
      }
      this.buffer.splice(0, entries.length);
      this.enqueued += entries.length;
      for (const x of entries) x.queued = true;
      const jids = entries.flatMap((x) => (x.jid ? [x.jid] : []));
      // Left in the journal if this fails: drained and queued again later, written once by id.
      await this.journal.remove(jids).catch((err: Error) => log.debug("usage journal trim failed", { error: err.message }));
    }
    if (this.troubleSince) this.recovered();
  }

  /**
   * One BullMQ job. A fresh job id per try: a batch queued twice (an answer lost on the way back) is
   * harmless, the worker writes each event once by its id.
   */
  private async send(events: UsageEvent[]): Promise<void> {
    await this.queue.add("batch", { events }, {
      jobId: randomUUID(),
      attempts: USAGE_ATTEMPTS,
      backoff: USAGE_BACKOFF,
      removeOnComplete: KEEP_WRITTEN_BATCHES,
      removeOnFail: false,
    });
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
    clearInterval(this.beatTimer);
    this.tock();
    let wait: NodeJS.Timeout | undefined;
    await Promise.race([this.flush(), new Promise<void>((resolve) => (wait = setTimeout(resolve, CLOSE_WAIT_MS)))]);
    clearTimeout(wait);
    this.dropped += this.buffer.length;
    if (this.dropped) log.error("usage events not queued at shutdown: Redis unreachable; those it journaled another gateway will queue", { events: this.dropped });
    await Promise.race([this.journal.close().catch(() => undefined), new Promise<void>((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())]);
    await Promise.race([this.queue.close(), new Promise<void>((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())]);
  }
}
