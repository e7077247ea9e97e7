// The node's memory read rate, for CPU inference placement (tokens/s on CPU follow memory
// bandwidth). Measured in a worker thread so the agent's event loop never waits on it: a buffer far
// larger than any cache is filled, then scanned by memchr (Buffer.indexOf of a byte it does not hold) a few times
// and the fastest pass counts. Repeated now and then; the best figure is kept, since a busy node
// only ever measures low.
import { Worker } from "node:worker_threads";
import { log } from "../../common/logging.ts";

const DEFAULT_BYTES = 256 << 20;
const DEFAULT_PASSES = 3;
const DEFAULT_EVERY_MS = 15 * 60_000;

// Plain JavaScript, evaluated in the worker (no loader there).
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
// Written through, so every page is real memory (untouched pages all map the one zero page).
const buf = Buffer.allocUnsafe(workerData.bytes).fill(7);
let best = Infinity;
for (let i = 0; i < workerData.passes; i++) {
  const t0 = process.hrtime.bigint();
  if (buf.indexOf(1) !== -1) throw new Error("the scanned buffer holds a 1");
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (s > 0 && s < best) best = s;
}
parentPort.postMessage(Number.isFinite(best) ? workerData.bytes / best / 1e9 : 0);
`;

/** One measurement in a worker thread: GB/s (10^9 bytes a second). */
export function measureMemoryRead(bytes = DEFAULT_BYTES, passes = DEFAULT_PASSES): Promise<number> {
  return new Promise((resolve, reject) => {
    const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { bytes, passes } });
    let rate: number | undefined;
    w.once("message", (m: unknown) => (rate = typeof m === "number" ? m : 0));
    w.once("error", reject);
    w.once("exit", (code) => (rate !== undefined ? resolve(rate) : reject(new Error(`memory read worker exited with ${code}`))));
  });
}

export interface MemoryReadMeter {
  /** The best rate so far; 0 until the first measurement ends. */
  best(): number;
  /** Resolves after the next measurement (tests). */
  measured(): Promise<number>;
  stop(): void;
}

/** Measures at once (in the background) and then every `everyMs`, keeping the best. */
export function startMemoryReadMeter(opts: { everyMs?: number; bytes?: number; passes?: number } = {}): MemoryReadMeter {
  let best = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let waiters: ((n: number) => void)[] = [];
  const once = async () => {
    try {
      const rate = await measureMemoryRead(opts.bytes ?? DEFAULT_BYTES, opts.passes ?? DEFAULT_PASSES);
      if (rate > best) best = rate;
    } catch (err) {
      log.warn("memory read rate not measured", { err: err as Error });
    }
    const w = waiters;
    waiters = [];
    for (const f of w) f(best);
    if (stopped) return;
    timer = setTimeout(() => void once(), opts.everyMs ?? DEFAULT_EVERY_MS);
    timer.unref();
  };
  void once();
  return {
    best: () => best,
    measured: () => new Promise((resolve) => waiters.push(resolve)),
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
