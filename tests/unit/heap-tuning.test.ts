// The gateway's V8 tuning takes effect in a running process: with pretenuring off, V8 processes no
// allocation-site feedback at all (its statistics trace prints nothing); left on, the same workload
// (objects from one literal site kept across scavenges) gets sites judged for tenuring.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPO } from "../helpers/settings.ts";

function pretenuringDecisions(setting: "0" | "1"): number {
  const tuning = pathToFileURL(join(REPO, "gateway", "heap-tuning.ts")).href;
  const script = `
    const { tuneGatewayHeap } = await import(${JSON.stringify(tuning)});
    tuneGatewayHeap(${JSON.stringify(setting)});
    const keep = [];
    const make = (i) => ({ i, pair: [i, i + 1] });
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 2000; i++) keep.push(make(i));
      globalThis.gc({ type: "minor" });
    }
    console.log("kept", keep.length);`;
  const out = spawnSync(process.execPath, ["--expose-gc", "--trace-pretenuring-statistics", "--import", "tsx", "--input-type=module", "-e", script], {
    cwd: REPO,
    encoding: "utf8",
  });
  assert.equal(out.status, 0, out.stderr);
  assert.match(out.stdout, /kept 40000/);
  return out.stdout.split("\n").filter((l) => l.includes("AllocationSite(")).length;
}

test("LLMGW_GATEWAY_PRETENURING=0 turns V8's allocation-site pretenuring off in the process", () => {
  assert.equal(pretenuringDecisions("0"), 0);
});

test("LLMGW_GATEWAY_PRETENURING=1 leaves it on: the same workload is judged for tenuring", () => {
  assert.ok(pretenuringDecisions("1") > 0);
});
