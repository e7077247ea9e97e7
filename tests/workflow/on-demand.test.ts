// An on-demand model's entity workflow, on the time-skipping test server with a stand-in fleet and
// a stand-in idle check: a wake serves it (one wake however many gateways ask), the idle watch puts
// it to sleep once idle past its limit (the watch's waits pass in skipped time), and the next wake
// serves as many replicas again. The gateway's held requests and real engines are proven in
// tests/integration/on-demand.test.ts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { WorkflowHandle } from "@temporalio/client";
import { settingsSignal, stateQuery, wakeSignal } from "../../workflows/messages.ts";
import type { ModelState } from "../../workflows/model-types.ts";
import { standInFleet } from "../helpers/standin-fleet.ts";
import { recorded, signalsHandled, timeSkippingEnv, untilQuery, type SkippingEnv } from "../helpers/time-skipping.ts";

const IDLE_AFTER_MS = 10 * 60_000;

/** The fleet, an idle check answering from `idle.now`, and the catalog's newest version for a model never served. */
function standIns(model: string) {
  const fleet = standInFleet(model, []);
  const idle = { now: false, checks: 0, onDemand: true };
  const r = recorded({
    ...fleet.activities,
    idleCheck: async () => {
      idle.checks++;
      return { onDemand: idle.onDemand, idleMs: idle.now ? IDLE_AFTER_MS + 1 : 0, idleAfterMs: IDLE_AFTER_MS };
    },
    wakeCommand: async () => ({ version: "v3", engine: "sim", args: [], replicas: 0 }),
  });
  return { fleet, idle, ...r };
}

/**
 * Runs the entity on a time-skipping server of its own: after an earlier test's workflows on a
 * shared one, an hour of skipped time once took 240 s of real time under load (on-demand.test.ts
 * ran 494 s in a whole run), so the wait on skipped time is only this test's.
 */
async function withEntity(model: string, initial: ModelState, s: ReturnType<typeof standIns>, fn: (handle: WorkflowHandle, state: () => Promise<ModelState>, t: SkippingEnv) => Promise<void>) {
  const t = await timeSkippingEnv();
  try {
    await t.run(s.activities, async (taskQueue) => {
      const handle = await t.client.workflow.start("modelEntity", { taskQueue, workflowId: `model/${model}`, args: [initial] });
      try {
        await fn(handle, () => handle.query(stateQuery), t);
      } finally {
        await handle.terminate("test over").catch(() => undefined);
      }
    });
  } finally {
    await t.close();
  }
}

describe("on-demand model", () => {
  it("wakes once however many ask, sleeps once idle past its limit, and wakes as large again", async () => {
    const model = "od";
    const s = standIns(model);
    const initial: ModelState = {
      name: model,
      desired: { version: "v1", engine: "sim", args: [], replicas: 2 },
      seq: 0,
      operations: [],
      onDemand: { phase: "sleeping", since: 0, wakes: 0 },
    };
    await withEntity(model, initial, s, async (handle, state, t) => {
      // Three gateways hold a request each.
      for (let i = 0; i < 3; i++) await handle.signal(wakeSignal, { reason: `gateway ${i}` });
      const woke = await untilQuery("the wake", state, (st) => st.onDemand?.phase === "serving");
      assert.deepEqual(woke.operations.map((o) => [o.kind, o.state]), [["wake", "completed"]]);
      assert.equal(woke.onDemand?.wakes, 1);
      assert.deepEqual(s.fleet.versions(), ["v1", "v1"]);

      // Busy: the idle watch looks, and looks again later; nothing sleeps.
      await t.env.sleep("30 minutes");
      await untilQuery("an idle check", state, () => s.idle.checks >= 2);
      assert.equal((await state()).onDemand?.phase, "serving");
      assert.deepEqual(s.fleet.versions(), ["v1", "v1"]);

      s.idle.now = true;
      await t.env.sleep("1 minute");
      const asleep = await untilQuery("the sleep", state, (st) => st.onDemand?.phase === "sleeping");
      assert.deepEqual(asleep.operations.map((o) => [o.kind, o.state]), [["wake", "completed"], ["sleep", "completed"]]);
      assert.deepEqual(s.fleet.versions(), [], "its engines stopped");
      assert.equal(asleep.desired?.replicas, 2, "the desired count is kept for the next wake");

      s.idle.now = false;
      await handle.signal(wakeSignal, { reason: "a new request" });
      const again = await untilQuery("the second wake", state, (st) => st.onDemand?.phase === "serving");
      assert.equal(again.onDemand?.wakes, 2);
      assert.deepEqual(s.fleet.versions(), ["v1", "v1"]);
      assert.equal(s.names().filter((n) => n === "wakeCommand").length, 0, "a model served before wakes as it was served");
    });
  });

  it("leaves an always-on model's workflow alone: no idle check until its settings say it may be on demand", async () => {
    const model = "always-on";
    const s = standIns(model);
    s.idle.onDemand = false;
    const initial: ModelState = { name: model, desired: { version: "v1", engine: "sim", args: [], replicas: 1 }, seq: 0, operations: [] };
    await withEntity(model, initial, s, async (handle, state, t) => {
      // An hour of workflow time: an idle watch, were it running, would have checked every 15 s.
      await t.env.sleep("1 hour");
      assert.equal(s.idle.checks, 0, "an always-on model polls nothing");
      // A settings change (`ctl model set`): the watch looks once, finds it is not on demand, and stops.
      await handle.signal(settingsSignal);
      await untilQuery("the idle check", state, () => s.idle.checks >= 1);
      await untilQuery("the watch to stop", state, (st) => st.idleWatch === false);
      await t.env.sleep("1 hour");
      assert.equal(s.idle.checks, 1);
      assert.equal((await state()).operations.length, 0);
    });
  });

  it("a model never served wakes with one replica of the catalog's newest version", async () => {
    const model = "od-new";
    const s = standIns(model);
    await withEntity(model, { name: model, desired: null, seq: 0, operations: [] }, s, async (handle, state) => {
      await handle.signal(wakeSignal, { reason: "first request" });
      const woke = await untilQuery("the wake", state, (st) => st.onDemand?.phase === "serving");
      assert.deepEqual(woke.desired, { version: "v3", engine: "sim", args: [], replicas: 1 });
      assert.deepEqual(s.fleet.versions(), ["v3"]);
      await handle.signal(wakeSignal, { reason: "another request" });
      await signalsHandled(handle);
      assert.equal((await state()).operations.length, 1, "an awake model is not woken again");
    });
  });
});
