// The canary's decisions, on the time-skipping test server with a stand-in fleet and stand-in
// figures: a window every windowMs of workflow time until durationMs, each judged against the
// stable version; every window within limits promotes (a rolling upgrade of the rest), one over
// the error rate, too few requests throughout, or an abort roll back; promote decides at once.
// Real figures from real engines under load are proven in tests/integration/canary.test.ts.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { VersionFigures } from "../../activities/canary.ts";
import type { CanaryInput } from "../../workflows/canary.ts";
import { abortSignal, promoteSignal } from "../../workflows/messages.ts";
import type { CanaryDecision, ReplicaRef } from "../../workflows/model-types.ts";
import { standInFleet } from "../helpers/standin-fleet.ts";
import { gate, heldUntil, recorded, signalsHandled, timeSkippingEnv, type SkippingEnv } from "../helpers/time-skipping.ts";

let t: SkippingEnv;
before(async () => {
  t = await timeSkippingEnv();
});
after(async () => {
  await t?.close();
});

const model = "m";
const MINUTE = 60_000;
const input: CanaryInput = {
  model,
  serving: 2,
  version: "v2",
  engine: "sim",
  args: [],
  weight: 30,
  durationMs: 3 * MINUTE,
  windowMs: MINUTE,
  maxErrorRate: 0.05,
  maxLatencyRatio: 2,
  minRequests: 3,
  replicas: 1,
  wave: 1,
};
const figures = (requests: number, errorRate: number, p50Ms: number): VersionFigures => ({ requests, errors: Math.round(requests * errorRate), errorRate, p50Ms });
const healthy = { v1: figures(70, 0, 100), v2: figures(30, 0, 110) };

/** Stand-ins: the fleet serving v1 twice, and `windows` answering versionFigures in turn. */
function standIns(windows: Record<string, VersionFigures>[], bringUp?: (r: ReplicaRef) => Promise<void>) {
  const fleet = standInFleet(model, ["v1", "v1"], bringUp);
  let n = 0;
  const r = recorded({
    ...fleet.activities,
    setRouteWeights: async () => undefined,
    versionFigures: async () => windows[Math.min(n++, windows.length - 1)]!,
  });
  return { fleet, ...r };
}

const sinceOf = (calls: { name: string; input: unknown }[]) => calls.filter((c) => c.name === "versionFigures").map((c) => (c.input as { sinceMs: number }).sinceMs);
const weightsOf = (calls: { name: string; input: unknown }[]) => calls.filter((c) => c.name === "setRouteWeights").map((c) => (c.input as { weights: unknown }).weights);

describe("canary", () => {
  it("promotes after every window within limits, then upgrades the rest", async () => {
    const s = standIns([healthy]);
    const decision = await t.run(s.activities, (taskQueue) => t.client.workflow.execute("canary", { taskQueue, workflowId: "canary-promote", args: [input] })) as CanaryDecision;
    assert.equal(decision.decision, "promoted");
    assert.equal(decision.reason, "3 window(s) within limits");
    assert.deepEqual(decision.windows.map((w) => w.verdict), ["ok", "ok", "ok"]);
    // A window of at least a minute of workflow time each, each asking for the figures since its own start.
    const since = sinceOf(s.calls);
    assert.equal(since.length, 3);
    for (let i = 1; i < since.length; i++) assert.ok(since[i]! - since[i - 1]! >= MINUTE, `window ${i} lasted ${since[i]! - since[i - 1]!} ms`);
    assert.deepEqual(weightsOf(s.calls), [{ v1: 70, v2: 30 }, null]);
    // The promotion: the canary's replica stays, both v1 replicas are replaced.
    assert.deepEqual(s.fleet.versions(), ["v2", "v2"]);
    assert.equal(s.fleet.fewestReadyAfterStop(), 2);
  });

  it("rolls back at the first window over the error rate, without judging more", async () => {
    const s = standIns([healthy, { v1: figures(70, 0, 100), v2: figures(30, 0.5, 100) }]);
    const decision = await t.run(s.activities, (taskQueue) => t.client.workflow.execute("canary", { taskQueue, workflowId: "canary-errors", args: [input] })) as CanaryDecision;
    assert.equal(decision.decision, "rolled-back");
    assert.equal(decision.reason, "error rate 50.0% over the 5.0% allowed");
    assert.deepEqual(decision.windows.map((w) => w.verdict), ["ok", "errors"]);
    assert.equal(sinceOf(s.calls).length, 2);
    assert.deepEqual(weightsOf(s.calls), [{ v1: 70, v2: 30 }, null]);
    assert.deepEqual(s.fleet.versions(), ["v1", "v1"], "the canary's replica is stopped and nothing else changes");
    assert.equal(s.names().at(-1), "stopReplica");
  });

  it("rolls back a version whose median latency is over the ratio", async () => {
    const s = standIns([{ v1: figures(70, 0, 100), v2: figures(30, 0, 350) }]);
    const decision = await t.run(s.activities, (taskQueue) => t.client.workflow.execute("canary", { taskQueue, workflowId: "canary-latency", args: [input] })) as CanaryDecision;
    assert.equal(decision.decision, "rolled-back");
    assert.equal(decision.reason, "median latency 350.0 ms is over 2× the stable 100.0 ms");
    assert.deepEqual(s.fleet.versions(), ["v1", "v1"]);
  });

  it("rolls back when too few requests reached the canary in every window", async () => {
    const s = standIns([{ v1: figures(70, 0, 100), v2: figures(2, 0, 100) }]);
    const decision = await t.run(s.activities, (taskQueue) => t.client.workflow.execute("canary", { taskQueue, workflowId: "canary-too-few", args: [input] })) as CanaryDecision;
    assert.equal(decision.decision, "rolled-back");
    assert.equal(decision.reason, "too few requests reached the canary to judge it");
    assert.deepEqual(decision.windows.map((w) => w.verdict), ["too-few", "too-few", "too-few"]);
    assert.deepEqual(s.fleet.versions(), ["v1", "v1"]);
  });

  for (const [signal, expected] of [
    [abortSignal, { decision: "rolled-back", reason: "aborted by an operator", versions: ["v1", "v1"] }],
    [promoteSignal, { decision: "promoted", reason: "promoted by an operator", versions: ["v2", "v2"] }],
  ] as const) {
    it(`${signal.name} decides at once, before any window is judged`, async () => {
      // The signal lands while the canary's replica is coming up.
      const reached = gate();
      const release = gate();
      const s = standIns([healthy], async () => {
        reached.open();
        await heldUntil(release.promise);
      });
      const decision = await t.run(s.activities, async (taskQueue) => {
        const handle = await t.client.workflow.start("canary", { taskQueue, workflowId: `canary-${signal.name}`, args: [input] });
        await reached.promise;
        await handle.signal(signal);
        await signalsHandled(handle);
        release.open();
        return (await handle.result()) as CanaryDecision;
      });
      assert.equal(decision.decision, expected.decision);
      assert.equal(decision.reason, expected.reason);
      assert.deepEqual(decision.windows, []);
      assert.equal(sinceOf(s.calls).length, 0, "no figures asked for");
      assert.deepEqual(s.fleet.versions(), expected.versions);
    });
  }
});
