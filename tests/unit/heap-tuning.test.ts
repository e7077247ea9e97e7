// The gateway's V8 tuning takes effect in a running process, seen in V8's own traces: with
// pretenuring off it processes no allocation-site feedback at all, and after a full GC the old
// generation's next limit is what was left times the factor asked for. Left alone, the same workload
// gets sites judged for tenuring and a factor V8 picks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { HeapTuning } from "../../gateway/heap-tuning.ts";
import { REPO } from "../helpers/settings.ts";

/** Runs a workload under the tuning (or none) and returns V8's trace of it. */
function traced(tuning: HeapTuning | null): string {
  const module = pathToFileURL(join(REPO, "gateway", "heap-tuning.ts")).href;
  const script = `
    const { tuneGatewayHeap } = await import(${JSON.stringify(module)});
    const tuning = ${JSON.stringify(tuning)};
    if (tuning) tuneGatewayHeap(tuning);
    // Objects from one literal site kept across scavenges, then a full GC.
    const keep = [];
    const make = (i) => ({ i, pair: [i, i + 1] });
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 2000; i++) keep.push(make(i));
      globalThis.gc({ type: "minor" });
    }
    globalThis.gc();
    console.log("kept", keep.length);`;
  const out = spawnSync(process.execPath, ["--expose-gc", "--trace-pretenuring-statistics", "--trace-gc-verbose", "--import", "tsx", "--input-type=module", "-e", script], {
    cwd: REPO,
    encoding: "utf8",
  });
  assert.equal(out.status, 0, out.stderr);
  assert.match(out.stdout, /kept 40000/);
  return out.stdout;
}

const decisions = (trace: string): number => trace.split("\n").filter((l) => l.includes("pretenuring: AllocationSite(")).length;
/** The factor of each old-generation limit V8 set after a full GC ("[HeapController] Limit: ... (2.0)"). */
const factors = (trace: string): number[] => [...trace.matchAll(/\[HeapController\] Limit: .*\((\d+\.\d+)\)/g)].map((m) => Number(m[1]));

test("the gateway's tuning: no pretenuring, and the old generation grows 2x between full GCs", () => {
  const trace = traced({ LLMGW_GATEWAY_PRETENURING: "0", LLMGW_GATEWAY_HEAP_GROWING_PERCENT: 100 });
  assert.equal(decisions(trace), 0);
  const f = factors(trace);
  assert.ok(f.length > 0, "no heap limit in the trace");
  assert.deepEqual([...new Set(f)], [2]);
});

test("other settings are honoured: pretenuring kept, another growth factor", () => {
  const trace = traced({ LLMGW_GATEWAY_PRETENURING: "1", LLMGW_GATEWAY_HEAP_GROWING_PERCENT: 50 });
  assert.ok(decisions(trace) > 0);
  assert.deepEqual([...new Set(factors(trace))], [1.5]);
});

test("untuned, V8 judges sites for tenuring and picks its own factor", () => {
  const trace = traced(null);
  assert.ok(decisions(trace) > 0);
  assert.ok(factors(trace).some((x) => x !== 2), "V8 picked 2x by itself: the tuned test proves nothing");
});
