// A model whose repairs fail in a row is parked, and raises one model_parked notification; more
// repair signals then change nothing. The model's workflow on the real Temporal server, with
// stand-in activities whose placement always fails; its history is then replayed from the start.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { ApplicationFailure } from "@temporalio/activity";
import { Worker } from "@temporalio/worker";
import { waitFor } from "../../common/children.ts";
import type { RaisedNotification } from "../../common/notifier.ts";
import { repairSignal } from "../../workflows/messages.ts";
import type { ModelState } from "../../workflows/model-types.ts";
import { standInEnv, uniqueQueue, type StandInEnv } from "../helpers/workflow-standins.ts";

let env: StandInEnv;
before(async () => {
  env = await standInEnv();
});
after(async () => {
  await env?.close();
});

it("three failed repairs park the model and raise one model_parked notification", async () => {
  const taskQueue = uniqueQueue("model-parked");
  const model = taskQueue;
  const raised: RaisedNotification[] = [];
  let placements = 0;
  const activities = {
    ensureVersion: async () => ({ versionId: "v1-id" }),
    liveReplicas: async () => [],
    placeReplicas: async () => {
      placements++;
      throw ApplicationFailure.nonRetryable("no node has room for the replica", "NoPlacement");
    },
    raiseNotification: async (n: RaisedNotification) => void raised.push(n),
  };
  const workers = await env.workers(taskQueue, activities);
  const workflows = await workers.workflows();
  const initial: ModelState = { name: model, desired: { version: "v1", engine: "sim", args: [], replicas: 1 }, seq: 0, operations: [] };
  const handle = await env.temporal.client.workflow.start("modelEntity", { taskQueue, workflowId: `model/${model}`, args: [initial] });
  const state = () => handle.query<ModelState>("state");
  try {
    await workers.activities.runUntil(
      workflows.runUntil(async () => {
        // As the fleet watch does for each dead replica it finds; a repair waits 4 s, then 8 s, after a failed one.
        for (let failed = 1; failed <= 3; failed++) {
          await handle.signal(repairSignal, { reason: "a replica's engine died" });
          await waitFor(`repair ${failed} to fail`, async () => ((await state()).failedRepairs ?? 0) >= failed, 30_000, 100);
        }
        const parked = await waitFor("the notification", async () => (raised.length ? state() : null), 10_000, 100);
        assert.match(parked.parked ?? "", /^parked after 3 failed repairs; last: .*no node has room/);
        await handle.signal(repairSignal, { reason: "another engine died" });
        await new Promise((r) => setTimeout(r, 1500));
        assert.equal((await state()).operations.length, 3, "a parked model queues no repair");
      }),
    );
    assert.equal(placements, 3);
    assert.equal(raised.length, 1);
    assert.equal(raised[0]!.kind, "model_parked");
    assert.equal(raised[0]!.subject, model);
    assert.match(raised[0]!.summary, new RegExp(`^model ${model} is parked: its dead replicas are no longer replaced until an operator serves it`));
    await Worker.runReplayHistory({ workflowBundle: env.bundle }, await handle.fetchHistory(), handle.workflowId);
  } finally {
    await handle.terminate("test over").catch(() => undefined);
  }
});
