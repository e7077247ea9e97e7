// V8 settings for the gateway process, set before it loads anything else.
//
// Pretenuring: once most objects from one allocation site outlive a scavenge, V8 allocates that
// site's objects straight in the old generation. On the gateway's hot path that backfires. A request's
// objects are born old and die young, and until the next full GC each dead one still holds the young
// objects it points to (the scavenger takes every old-to-young pointer as live). So more survives each
// scavenge, more sites look long-lived, and more are pretenured. With it off, what survives a scavenge
// under load fell from 9–10 % to about 4 % of what was allocated, and the median scavenge from 2.6 to
// 1.7 ms (docs/benchmarks.md, stop 18).
import { setFlagsFromString } from "node:v8";

export function tuneGatewayHeap(pretenuring: "0" | "1"): void {
  if (pretenuring === "0") setFlagsFromString("--no-allocation-site-pretenuring");
}
