// V8 settings for the gateway process, set before it loads anything else (docs/benchmarks-history.md, stop 18).
//
// Pretenuring: once most objects from one allocation site outlive a scavenge, V8 allocates that
// site's objects straight in the old generation. On the gateway's hot path that backfires. A request's
// objects are born old and die young, and until the next full GC each dead one still holds the young
// objects it points to (the scavenger takes every old-to-young pointer as live). So more survives each
// scavenge, more sites look long-lived, and more are pretenured. With it off, what survives a scavenge
// under load at 1000 req/s fell from 9–10 % to about 4 % of what was allocated, and the median
// scavenge from 2.4–3.4 ms to 1.8–1.9 ms.
//
// Heap growth: after a full GC V8 lets the old generation grow by a factor it picks from how fast it
// marks against how fast the program promotes. The gateway promotes little, so V8 picked about 1.1 and
// ran a full GC (a 3–8 ms pause, and marking threads taking CPU from the rest) every 1–2 s under
// load. At 2× none fell in the measured seconds, for a heap of up to twice what is live.
//
// GC threads: V8 scavenges with helper threads and marks and sweeps concurrently. On two CPUs shared
// with the engines, the workers and the clients there is no idle core for them: each helper's slice is
// taken from the main thread or from the rest of the request's path, and a scavenge ends only when
// its slowest helper has run. With the GC on the main thread alone the gateway's added p99 at 1000
// req/s was lower in 7 of 8 same-hour comparisons (stops 14, 15 and 21). V8 cannot change this
// in a running process (set at run time, V8 aborted in its next GC), so whoever starts the
// gateway puts the flag on node's command line: gatewayNodeFlags().
import { availableParallelism } from "node:os";
import { setFlagsFromString } from "node:v8";
import type { Config } from "../common/config.ts";

export type HeapTuning = Pick<Config, "LLMGW_GATEWAY_PRETENURING" | "LLMGW_GATEWAY_HEAP_GROWING_PERCENT">;

/** At most this many CPUs, "auto" runs the gateway's GC on its main thread alone. */
const SINGLE_THREADED_GC_MAX_CPUS = 2;

/** Node flags the gateway process is to be started with. */
export function gatewayNodeFlags(c: Pick<Config, "LLMGW_GATEWAY_SINGLE_THREADED_GC">, cpus = availableParallelism()): string[] {
  const setting = c.LLMGW_GATEWAY_SINGLE_THREADED_GC;
  const single = setting === "1" || (setting === "auto" && cpus <= SINGLE_THREADED_GC_MAX_CPUS);
  return single ? ["--single-threaded-gc"] : [];
}

/** The flags of gatewayNodeFlags() this process was started without (its launcher did not add them). */
export function missingGatewayNodeFlags(c: Pick<Config, "LLMGW_GATEWAY_SINGLE_THREADED_GC">, execArgv = process.execArgv): string[] {
  return gatewayNodeFlags(c).filter((f) => !execArgv.includes(f));
}

export function tuneGatewayHeap(c: HeapTuning): void {
  if (c.LLMGW_GATEWAY_PRETENURING === "0") setFlagsFromString("--no-allocation-site-pretenuring");
  const growing = c.LLMGW_GATEWAY_HEAP_GROWING_PERCENT;
  if (growing > 0) setFlagsFromString(`--heap-growing-percent=${growing}`);
}
