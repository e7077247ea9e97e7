// The batch workflow's decisions (workflows/batch.ts), on the time-skipping test server with
// stand-in activities: lines run to the end complete the batch; the 24 h completion window's end
// stops the run and expires the batch; a cancel stops it and ends it cancelled; a run that fails
// for good fails the batch with the cause. Each ending writes the files once (batchFinish).
// The activities themselves, with a real gateway, are tests/e2e/batches.test.ts's.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ApplicationFailure, Context } from "@temporalio/activity";
import { WorkflowFailedError } from "@temporalio/client";
import { waitFor } from "../../common/children.ts";
import type { BatchProgress, BatchSpec } from "../../workflows/batch-types.ts";
import { gate, recorded, timeSkippingEnv, type SkippingEnv } from "../helpers/time-skipping.ts";

let t: SkippingEnv;
before(async () => {
  t = await timeSkippingEnv();
});
after(async () => {
  await t?.close();
});

const DAY_MS = 24 * 3600_000;

/** Stand-ins; `runLines` is the run activity's body. */
function standIns(runLines: () => Promise<BatchProgress>) {
  return recorded({
    batchBegin: async () => undefined,
    batchRunLines: runLines,
    batchFinish: async () => undefined,
  });
}

/** A run that never ends by itself: heartbeats until cancelled, then ends as the real one does. */
function endless(running: { open: (v: void) => void }) {
  return async (): Promise<BatchProgress> => {
    const ctx = Context.current();
    running.open();
    const beat = setInterval(() => ctx.heartbeat({ total: 10, completed: 3, failed: 0 }), 200);
    try {
      await ctx.cancelled;
    } finally {
      clearInterval(beat);
    }
    throw new Error("unreachable");
  };
}

const finishOf = (s: ReturnType<typeof standIns>) => s.calls.filter((c) => c.name === "batchFinish").map((c) => c.input);

// The expiry test moves the server's clock a day on: it runs last, so the others' windows stay open.
describe("batchRun", () => {
  it("completes when every line has run", async () => {
    const s = standIns(async () => ({ total: 2, completed: 2, failed: 0 }));
    const spec: BatchSpec = { id: "batch_done", expiresAtMs: Date.now() + DAY_MS };
    await t.run(s.activities, (taskQueue) => t.client.workflow.execute("batchRun", { taskQueue, workflowId: "batch/batch_done", args: [spec] }));
    assert.deepEqual(s.names(), ["batchBegin", "batchRunLines", "batchFinish"]);
    assert.deepEqual(finishOf(s), [{ id: "batch_done", ending: "completed" }]);
  });

  // On a server of its own: after another test's workflow on the same time-skipping server, this one
  // hangs (the workflow task fails with ACTIVITY_UNKNOWN for the failed run activity, the test server
  // apparently skipping to the window's timer while the failure is delivered); on a fresh server it
  // passes. Tried and not kept (branch
  // batchx, 32c4eb3): the window's end waiting one workflow task made this pass and stalled the next.
  it("a run that fails for good fails the batch, naming the cause", async () => {
    const own = await timeSkippingEnv();
    const s = standIns(async () => {
      throw ApplicationFailure.create({ type: "BatchFailed", message: "the input file file-x was deleted", nonRetryable: true });
    });
    const spec: BatchSpec = { id: "batch_bad", expiresAtMs: Date.now() + DAY_MS };
    try {
      await own.run(s.activities, async (taskQueue) => {
        const handle = await own.client.workflow.start("batchRun", { taskQueue, workflowId: "batch/batch_bad", args: [spec] });
        // Polled, not awaited with result(): that would let the server skip to the window's end
        // while the failure is on its way, and race the two.
        await waitFor("the batch workflow to end", async () => (await handle.describe()).status.name !== "RUNNING", 60_000, 100);
        assert.equal((await handle.describe()).status.name, "FAILED");
      });
    } finally {
      await own.close();
    }
    assert.deepEqual(finishOf(s), [{ id: "batch_bad", ending: "failed", error: "the input file file-x was deleted" }]);
  });
  it("a cancel stops the run and ends the batch cancelled; the workflow ends cancelled", async () => {
    const running = gate();
    const s = standIns(endless(running));
    const spec: BatchSpec = { id: "batch_stop", expiresAtMs: Date.now() + DAY_MS };
    await t.run(s.activities, async (taskQueue) => {
      const handle = await t.client.workflow.start("batchRun", { taskQueue, workflowId: "batch/batch_stop", args: [spec] });
      await running.promise;
      await handle.cancel();
      const err = await handle.result().then(() => null, (e: unknown) => e);
      assert.ok(err instanceof WorkflowFailedError, String(err));
    });
    assert.deepEqual(finishOf(s), [{ id: "batch_stop", ending: "cancelled" }]);
  });

  it("expires at the end of the completion window: the run is stopped, the batch marked expired", async () => {
    const running = gate();
    const s = standIns(endless(running));
    const spec: BatchSpec = { id: "batch_late", expiresAtMs: Date.now() + DAY_MS };
    await t.run(s.activities, async (taskQueue) => {
      const handle = await t.client.workflow.start("batchRun", { taskQueue, workflowId: "batch/batch_late", args: [spec] });
      await running.promise;
      await t.env.sleep(DAY_MS + 60_000);
      await handle.result();
    });
    assert.deepEqual(finishOf(s), [{ id: "batch_late", ending: "expired" }]);
  });

});
