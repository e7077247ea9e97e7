// Admission by band, per model. While the model's replicas have free slots a request goes at once;
// when every slot is taken it waits in its band's queue. Bands are served in priority order
// (interactive, batch, bulk), so interactive never waits behind bulk, and each band may hold only
// its share of the slots, so bulk cannot fill the replicas interactive traffic needs.
import { ApiError } from "../errors.ts";

export const BANDS = ["interactive", "batch", "bulk"] as const;
export type Band = (typeof BANDS)[number];

export interface BandPolicy {
  /** The share of the model's slots this band may hold at once (0..1]. */
  share: number;
  /** The longest a request waits for a slot before a 504. */
  maxWaitMs: number;
  /** Requests waiting beyond this are refused at once with a 503. */
  maxQueue: number;
}

export const DEFAULT_BANDS: Readonly<Record<Band, BandPolicy>> = {
  interactive: { share: 1, maxWaitMs: 10_000, maxQueue: 1_000 },
  batch: { share: 0.75, maxWaitMs: 30_000, maxQueue: 5_000 },
  bulk: { share: 0.5, maxWaitMs: 120_000, maxQueue: 20_000 },
};

/** A key's band; anything unknown is served as interactive (the store's default). */
export function bandOf(s: string | undefined): Band {
  return s === "batch" || s === "bulk" ? s : "interactive";
}

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
  timer: NodeJS.Timeout;
}

export class Admission {
  private inUse = 0;
  private held: Record<Band, number> = { interactive: 0, batch: 0, bulk: 0 };
  private queues: Record<Band, Waiter[]> = { interactive: [], batch: [], bulk: [] };

  constructor(
    /** Slots of the model's replicas together, asked each time (replicas come and go). */
    private readonly capacity: () => number,
    private readonly bands: Readonly<Record<Band, BandPolicy>> = DEFAULT_BANDS,
    /** false (LLMGW_ADMISSION=off): every request goes at once and queues in the engine, FIFO, whatever its band. */
    readonly enabled = true,
  ) {}

  /** Takes a slot now if one is free and no band of the same or higher priority is waiting. */
  tryAdmit(band: Band): boolean {
    if (this.enabled && !this.hasRoom(band)) return false;
    this.take(band);
    return true;
  }

  /** Would tryAdmit take a slot now? (No state change: fallbacks ask it before choosing a model.) */
  hasRoom(band: Band): boolean {
    if (!this.enabled) return this.inUse < this.capacity();
    for (const b of BANDS) {
      if (this.queues[b].length) return false;
      if (b === band) break;
    }
    return this.fits(band);
  }

  /** Waits for a slot; rejects with a 503 when the band's queue is full, a 504 after its longest wait. */
  wait(band: Band, signal: AbortSignal): Promise<void> {
    const policy = this.bands[band];
    const q = this.queues[band];
    if (q.length >= policy.maxQueue) {
      return Promise.reject(new ApiError("unavailable", `every replica of this model is busy and the ${band} queue is full; try again`, { code: "queue_full", retryAfterS: 1 }));
    }
    return new Promise<void>((resolve, reject) => {
      const leave = (err: unknown) => {
        const i = q.indexOf(w);
        if (i >= 0) q.splice(i, 1);
        signal.removeEventListener("abort", onAbort);
        reject(err);
      };
      const onAbort = () => {
        clearTimeout(w.timer);
        leave(signal.reason);
      };
      const w: Waiter = {
        resolve: () => {
          clearTimeout(w.timer);
          signal.removeEventListener("abort", onAbort);
          resolve();
        },
        reject: leave,
        timer: setTimeout(
          () =>
            leave(
              new ApiError("timeout", `every replica of this model stayed busy for ${policy.maxWaitMs} ms; try again`, {
                code: "queue_timeout",
                retryAfterS: Math.max(1, Math.ceil(policy.maxWaitMs / 10_000)),
              }),
            ),
          policy.maxWaitMs,
        ),
      };
      signal.addEventListener("abort", onAbort, { once: true });
      q.push(w);
    });
  }

  release(band: Band): void {
    this.inUse--;
    this.held[band]--;
    this.drain();
  }

  /** Admits waiters while slots are free, highest band first; also called when capacity grows. */
  drain(): void {
    for (const b of BANDS) {
      const q = this.queues[b];
      while (q.length && this.fits(b)) {
        this.take(b);
        q.shift()!.resolve();
      }
    }
  }

  waiting(band: Band): number {
    return this.queues[band].length;
  }

  /** Slots held by a band now. */
  holding(band: Band): number {
    return this.held[band];
  }

  private fits(band: Band): boolean {
    const cap = this.capacity();
    return this.inUse < cap && this.held[band] < Math.max(1, Math.floor(this.bands[band].share * cap));
  }

  private take(band: Band): void {
    this.inUse++;
    this.held[band]++;
  }
}
