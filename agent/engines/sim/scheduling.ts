// The sim's scheduling: a number of slots and a FIFO queue, as an engine's batch has, and the timing
// of each answer (the first token after ttftMs, shorter on a prefix-cache hit, then one token every
// 1/tokensPerSecond). With both at 0 the answer is written at once, without any timer.
import type http from "node:http";
import { performance } from "node:perf_hooks";
import { AnswerBodies, computeChoices, maxPiecesOf } from "./bodies.ts";
import type { Choice } from "./generation.ts";
import type { SimMetrics } from "./metrics.ts";
import { PrefixCache } from "./prefix-cache.ts";
import type { Replies } from "./replies.ts";
import type { GenRequest } from "./request.ts";
import type { SimSettings } from "./settings.ts";

/** Fast token rates are emitted in batches: at most one timer per 4 ms. */
const TICK_MIN_MS = 4;

interface Job {
  req: GenRequest;
  res: http.ServerResponse;
  choices: Choice[]; // computed when the job starts
  maxPieces: number;
  emitted: number; // tokens emitted per choice so far (timed streaming)
  timer: NodeJS.Timeout | null;
  firstAt: number; // performance.now() of the first token
  done: boolean;
  queued: boolean;
  id: string;
}

export class Scheduler {
  running = 0;
  waiting = 0;
  /** Only on the timed path: an instant sim has no first-token time to shorten. */
  readonly prefixCache: PrefixCache | null;
  private readonly instant: boolean;
  private readonly tokenMs: number;
  private readonly queue: Job[] = [];
  private queueHead = 0; // queue[queueHead..] are waiting; compacted now and then
  private idSeq = 0;
  private onIdle: (() => void) | null = null;

  constructor(
    private readonly s: SimSettings,
    private readonly replies: Replies,
    private readonly bodies: AnswerBodies,
    private readonly metrics: SimMetrics,
  ) {
    this.instant = s.ttftMs === 0 && s.tokensPerSecond === 0;
    this.tokenMs = s.tokensPerSecond > 0 ? 1000 / s.tokensPerSecond : 0;
    this.prefixCache = s.prefixCacheTtftMs !== undefined && !this.instant ? new PrefixCache() : null;
  }

  /** A new answer's id; embeddings share the sequence with generations. */
  nextId(prefix: string): string {
    return prefix + ++this.idSeq;
  }

  /** Calls `fn` once nothing runs or waits: now, or when the last request ends. */
  whenIdle(fn: () => void): void {
    this.onIdle = () => {
      this.onIdle = null;
      fn();
    };
    if (this.running === 0 && this.waiting === 0) this.onIdle();
  }

  /** Cuts the connections of requests still waiting (a close that ran out of patience). */
  destroyWaiting(): void {
    for (const j of this.queue) if (j && !j.done) j.res.destroy();
  }

  /** Starts a request now, when a slot is free and none waits, or queues it (FIFO). */
  admit(g: GenRequest, res: http.ServerResponse): void {
    const job: Job = {
      req: g,
      res,
      choices: [],
      maxPieces: 0,
      emitted: 0,
      timer: null,
      firstAt: 0,
      done: false,
      queued: false,
      id: this.nextId(g.kind === "chat" ? "chatcmpl-" : "cmpl-"),
    };
    if (this.instant) {
      this.running++;
      try {
        this.runInstant(job);
      } finally {
        this.running--;
      }
      return;
    }
    res.on("close", () => {
      if (job.done) return;
      // The client went away before the answer was complete.
      if (job.queued) {
        job.done = true;
        this.waiting--;
        this.metrics.recordQueuedAbort(g.promptTokens);
        this.pump();
      } else this.finish(job, true);
    });
    if (g.stream) this.replies.startStream(job.res, g.requestId);
    if (this.running < this.s.slots && this.queueHead === this.queue.length) {
      this.running++;
      this.runTimed(job);
    } else {
      job.queued = true;
      this.waiting++;
      this.queue.push(job);
    }
  }

  /** The instant path: no timers; the whole answer is written now. */
  private runInstant(job: Job): void {
    const g = job.req;
    job.choices = computeChoices(g);
    job.maxPieces = maxPiecesOf(job.choices);
    const now = performance.now();
    job.firstAt = now;
    if (g.stream) {
      this.replies.startStream(job.res, g.requestId);
      job.res.end(this.bodies.chunks(g, job.id, job.choices, 0, Math.max(1, job.maxPieces)) + this.bodies.streamEnd(g, job.id, job.choices));
    } else {
      this.replies.send(job.res, 200, this.bodies.full(g, job.id, job.choices), g.requestId);
    }
    job.emitted = job.maxPieces;
    job.done = true;
    this.metrics.recordJob(job, now, false);
  }

  /** The timed path: first token after ttft, then one every 1/tps seconds. */
  private runTimed(job: Job): void {
    const g = job.req;
    job.choices = computeChoices(g);
    job.maxPieces = maxPiecesOf(job.choices);
    const total = Math.max(1, job.maxPieces);
    const startedAt = performance.now();
    const ttftMs = this.prefixCache !== null && g.prefix !== null && this.prefixCache.lookup(g.prefix, startedAt) ? this.s.prefixCacheTtftMs! : this.s.ttftMs;
    if (!g.stream) {
      const delay = ttftMs + (total - 1) * this.tokenMs;
      job.timer = setTimeout(() => {
        job.timer = null;
        job.firstAt = startedAt + ttftMs;
        if (job.done) return;
        this.replies.send(job.res, 200, this.bodies.full(g, job.id, job.choices), g.requestId);
        job.emitted = total;
        this.finish(job, false);
      }, delay);
      return;
    }
    this.replies.startStream(job.res, g.requestId);
    const tick = (): void => {
      job.timer = null;
      if (job.done) return;
      const now = performance.now();
      if (job.firstAt === 0) job.firstAt = now;
      const due = this.tokenMs === 0 ? total : Math.min(total, 1 + Math.floor((now - job.firstAt) / this.tokenMs + 1e-9));
      if (due > job.emitted) {
        let out = this.bodies.chunks(g, job.id, job.choices, job.emitted, due);
        job.emitted = due;
        if (due >= total) {
          out += this.bodies.streamEnd(g, job.id, job.choices);
          job.res.end(out);
          this.finish(job, false);
          return;
        }
        job.res.write(out);
      }
      const nextAt = job.firstAt + job.emitted * this.tokenMs;
      job.timer = setTimeout(tick, Math.max(TICK_MIN_MS, nextAt - performance.now()));
    };
    if (ttftMs === 0) tick();
    else job.timer = setTimeout(tick, ttftMs);
  }

  private finish(job: Job, aborted: boolean): void {
    if (job.done) return;
    job.done = true;
    if (job.timer !== null) {
      clearTimeout(job.timer);
      job.timer = null;
    }
    this.metrics.recordJob(job, performance.now(), aborted);
    this.running--;
    this.pump();
  }

  private pump(): void {
    while (this.running < this.s.slots && this.queueHead < this.queue.length) {
      const job = this.queue[this.queueHead] as Job;
      this.queue[this.queueHead++] = undefined as unknown as Job;
      if (job.done) continue; // aborted while waiting
      this.waiting--;
      job.queued = false;
      this.running++;
      this.runTimed(job);
    }
    if (this.queueHead > 1024 && this.queueHead * 2 > this.queue.length) {
      this.queue.splice(0, this.queueHead);
      this.queueHead = 0;
    } else if (this.queueHead === this.queue.length) {
      this.queue.length = 0;
      this.queueHead = 0;
    }
    if (this.onIdle !== null && this.running === 0 && this.waiting === 0) this.onIdle();
  }
}
