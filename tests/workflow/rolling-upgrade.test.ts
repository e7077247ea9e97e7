// The rolling upgrade's decisions, on the time-skipping test server with a stand-in fleet: waves
// that start new replicas before retiring old ones, a pause that holds the next wave until resumed,
// and an abort or a failed wave that rolls back to the old version. Engines, agents and the router
// are proven in tests/integration/rolling-upgrade.test.ts.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ApplicationFailure } from "@temporalio/activity";
import { WorkflowFailedError } from "@temporalio/client";
import { abortSignal, pauseSignal, progressQuery, resumeSignal } from "../../workflows/messages.ts";
import type { ReplicaRef, UpgradeInput } from "../../workflows/model-types.ts";
import { standInFleet } from "../helpers/standin-fleet.ts";
import { gate, heldUntil, recorded, signalsHandled, timeSkippingEnv, untilQuery, type SkippingEnv } from "../helpers/time-skipping.ts";

let t: SkippingEnv;
before(async () => {
  t = await timeSkippingEnv();
});
after(async () => {
  await t?.close();
});

const model = "m";
const input: UpgradeInput = { model, version: "v2", engine: "sim", args: [], wave: 1, replicas: 3 };
/** The calls of one wave: a replica placed, started and brought up, then an old one drained and stopped. */
const WAVE = ["placeReplicas", "weightsPlan", "startReplica", "bringUpReplica", "drainReplica", "stopReplica"];

/** Holds the bring-up of the nth new replica (1-based) until `release` is opened; `fail` fails it instead. */
function holdAt(n: number, opts: { fail?: boolean } = {}) {
  const reached = gate();
  const release = gate();
  let count = 0;
  const bringUp = async (r: ReplicaRef) => {
    if (r.version !== "v2" || ++count !== n) return;
    reached.open();
    await heldUntil(release.promise);
    if (opts.fail) throw ApplicationFailure.nonRetryable(`engine of ${r.id} exited with code 1`, "EngineExited");
  };
  return { bringUp, reached: reached.promise, release: () => release.open() };
}

describe("rolling upgrade", () => {
  it("replaces the replicas one wave at a time, never fewer serving than asked", async () => {
    const fleet = standInFleet(model, ["v1", "v1", "v1"]);
    const { activities, names, calls } = recorded(fleet.activities);
    const result = await t.run(activities, (taskQueue) => t.client.workflow.execute("rollingUpgrade", { taskQueue, workflowId: "upgrade-waves", args: [input] }));
    assert.deepEqual(result, { replicas: 3 });
    assert.deepEqual(names(), ["ensureVersion", "liveReplicas", "versionSpec", ...WAVE, ...WAVE, ...WAVE]);
    assert.deepEqual(fleet.versions(), ["v2", "v2", "v2"]);
    assert.equal(fleet.fewestReadyAfterStop(), 3);
    // Old replicas are retired in their order, one per wave.
    const stopped = calls.filter((c) => c.name === "stopReplica").map((c) => (c.input as { replica: ReplicaRef }).replica.id);
    assert.deepEqual(stopped, ["m-old-0", "m-old-1", "m-old-2"]);
  });

  it("a pause holds the next wave until resumed", async () => {
    const hold = holdAt(1);
    const fleet = standInFleet(model, ["v1", "v1", "v1"], hold.bringUp);
    const { activities, names } = recorded(fleet.activities);
    await t.run(activities, async (taskQueue) => {
      const handle = await t.client.workflow.start("rollingUpgrade", { taskQueue, workflowId: "upgrade-pause", args: [input] });
      await hold.reached;
      await handle.signal(pauseSignal);
      await signalsHandled(handle);
      hold.release();
      const paused = await untilQuery("the upgrade to pause", () => handle.query(progressQuery), (p) => p.phase === "paused");
      assert.deepEqual(paused.waves, { done: 1, total: 3 });
      // Wave 1 ended (its old replica retired); nothing of wave 2 was asked for.
      assert.equal(names().filter((n) => n === "placeReplicas").length, 1);
      assert.equal(names().at(-1), "stopReplica");
      assert.deepEqual(fleet.versions(), ["v1", "v1", "v2"]);
      await handle.signal(resumeSignal);
      assert.deepEqual(await handle.result(), { replicas: 3 });
    });
    assert.deepEqual(fleet.versions(), ["v2", "v2", "v2"]);
  });

  it("an abort rolls back to the old version: the retired replicas come back, the new ones go", async () => {
    const hold = holdAt(2);
    const fleet = standInFleet(model, ["v1", "v1", "v1"], hold.bringUp);
    const { activities, calls } = recorded(fleet.activities);
    await t.run(activities, async (taskQueue) => {
      const handle = await t.client.workflow.start("rollingUpgrade", { taskQueue, workflowId: "upgrade-abort", args: [input] });
      await hold.reached;
      await handle.signal(abortSignal);
      await signalsHandled(handle);
      hold.release();
      const err = await handle.result().then(() => null, (e: unknown) => e);
      assert.ok(err instanceof WorkflowFailedError);
      assert.match(String(err.cause?.message), /^aborted by an operator; rolled back to v1$/);
      assert.equal((await handle.query(progressQuery)).phase, "failed");
    });
    // Wave 2 finished before the abort was looked at; then one v1 started again for the one retired
    // in each of waves 1 and 2, and both v2 replicas drained and stopped.
    assert.deepEqual(fleet.versions(), ["v1", "v1", "v1"]);
    const started = calls.filter((c) => c.name === "startReplica").map((c) => (c.input as { version: string }).version);
    assert.deepEqual(started, ["v2", "v2", "v1", "v1"]);
    assert.equal(fleet.fewestReadyAfterStop(), 3);
  });

  it("a wave that fails rolls back, stopping the replica it started", async () => {
    const hold = holdAt(2, { fail: true });
    const fleet = standInFleet(model, ["v1", "v1", "v1"], hold.bringUp);
    const { activities } = recorded(fleet.activities);
    hold.release();
    const err = await t
      .run(activities, (taskQueue) => t.client.workflow.execute("rollingUpgrade", { taskQueue, workflowId: "upgrade-fails", args: [input] }))
      .then(() => null, (e: unknown) => e);
    assert.ok(err instanceof WorkflowFailedError);
    assert.match(String(err.cause?.message), /^wave 2 failed: .*; rolled back to v1$/);
    assert.deepEqual(fleet.versions(), ["v1", "v1", "v1"]);
  });
});
