// A model whose repairs fail in a row is parked, and raises one model_parked notification; more
// repair signals then change nothing. The model's workflow on the time-skipping test server, with
// stand-in activities whose placement always fails (the back-off between repairs, 4 s then 8 s,
// is skipped); its history is then replayed from the start.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { ApplicationFailure } from "@temporalio/activity";
import { Worker } from "@temporalio/worker";
import type { RaisedNotification } from "../../common/notifier.ts";
import { repairSignal, stateQuery } from "../../workflows/messages.ts";
import type { ModelState } from "../../workflows/model-types.ts";
import { recorded, signalsHandled, timeSkippingEnv, untilQuery, type SkippingEnv } from "../helpers/time-skipping.ts";

let t: SkippingEnv;
before(async () => {
  t = await timeSkippingEnv();
});
after(async () => {
  await t?.close();
});

it("three failed repairs park the model and raise one model_parked notification", async () => {
  const model = "parked-model";
  const raised: RaisedNotification[] = [];
  const { activities, names } = recorded({
    ensureVersion: async () => ({ versionId: "v1-id" }),
    liveReplicas: async () => [],
    placeReplicas: async (): Promise<never> => {
      throw ApplicationFailure.nonRetryable("no node has room for the replica", "NoPlacement");
    },
    raiseNotification: async (n: RaisedNotification) => void raised.push(n),
  });
  await t.run(activities, async (taskQueue) => {
    const initial: ModelState = { name: model, desired: { version: "v1", engine: "sim", args: [], replicas: 1 }, seq: 0, operations: [] };
    const handle = await t.client.workflow.start("modelEntity", { taskQueue, workflowId: `model/${model}`, args: [initial] });
    const state = () => handle.query(stateQuery);
    try {
      // As the fleet watch does for each dead replica it finds.
      for (let failed = 1; failed <= 3; failed++) {
        await handle.signal(repairSignal, { reason: "a replica's engine died" });
        // The back-off before the repair (none, 4 s, 8 s) passes in skipped time.
        await t.env.sleep("1 minute");
        await untilQuery(`repair ${failed} to fail`, state, (s) => (s.failedRepairs ?? 0) >= failed);
      }
      const parked = await untilQuery("the model parked", state, (s) => !!s.parked);
      assert.match(parked.parked ?? "", /^parked after 3 failed repairs; last: .*no node has room/);
      assert.deepEqual(parked.operations.map((o) => [o.kind, o.state, o.kind === "serve" && o.repair]), [
        ["serve", "failed", true],
        ["serve", "failed", true],
        ["serve", "failed", true],
      ]);
      await handle.signal(repairSignal, { reason: "another engine died" });
      await signalsHandled(handle);
      assert.equal((await state()).operations.length, 3, "a parked model queues no repair");
      assert.deepEqual(names(), [
        ...["ensureVersion", "liveReplicas", "placeReplicas"],
        ...["ensureVersion", "liveReplicas", "placeReplicas"],
        ...["ensureVersion", "liveReplicas", "placeReplicas"],
        "raiseNotification",
      ]);
      assert.equal(raised.length, 1);
      assert.equal(raised[0]!.kind, "model_parked");
      assert.equal(raised[0]!.subject, model);
      assert.match(raised[0]!.summary, new RegExp(`^model ${model} is parked: its dead replicas are no longer replaced until an operator serves it`));
      await Worker.runReplayHistory({ workflowBundle: t.bundle }, await handle.fetchHistory(), handle.workflowId);
    } finally {
      await handle.terminate("test over").catch(() => undefined);
    }
  });
});
