// The training workflow's decisions, on the time-skipping test server with stand-in activities:
// a cancel mid-run stops the trainer and ends the run as cancelled (no artifact taken), a node
// lost mid-run starts the run again on another node (the lost attempt charged the run time its node
// last reported), and a run that ends well has its artifact received. The stand-in trainer and its process group are proven in tests/integration/training.test.ts.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ApplicationFailure, Context } from "@temporalio/activity";
import { WorkflowFailedError } from "@temporalio/client";
import { waitFor } from "../../common/children.ts";
import type { TrainerStatus__Output } from "../../common/generated/proto/llmgw/agent/v1/TrainerStatus.ts";
import type { JobState } from "../../workflows/job-types.ts";
import { trainingCancelSignal, trainingProgressQuery, type TrainingInput } from "../../workflows/training-types.ts";
import { gate, recorded, signalsHandled, timeSkippingEnv, type SkippingEnv } from "../helpers/time-skipping.ts";

let t: SkippingEnv;
before(async () => {
  t = await timeSkippingEnv();
});
after(async () => {
  await t?.close();
});

const input = (id: string): TrainingInput => ({ id, base: "tiny", dataFileId: "data-1", gpuMemoryMiB: 8000, params: { steps: 20 }, gguf: false, maxAttempts: 2 });
const succeeded = (runId: string): TrainerStatus__Output => ({
  runId,
  state: "TRAINER_STATE_SUCCEEDED",
  step: 20,
  steps: 20,
  loss: 0.5,
  peakMemoryMib: 6000,
  error: "",
  artifactName: "adapter.safetensors",
  artifactBytes: 1234,
  artifactSha256: "ab".repeat(32),
  runSeconds: 12.5,
});

/** Stand-ins; `follow` is the trainer's run as the agent reports it. */
function standIns(follow: (i: { nodeId: string; runId: string; attempt: number }) => Promise<TrainerStatus__Output>) {
  const states: JobState[] = [];
  const charged: number[] = [];
  const r = recorded({
    pickTrainingNode: async (i: { avoid: string[] }) => ({ nodeId: i.avoid.includes("n1") ? "n2" : "n1", gpu: 0 }),
    startTrainer: async () => undefined,
    setJobState: async (i: { state: JobState }) => void states.push(i.state),
    followTrainer: follow,
    cancelTrainer: async () => ({ step: 7, steps: 20, loss: 1.5, peakMemoryMiB: 6000, runSeconds: 3 }),
    recordTrainingUsage: async (i: { attempt: number; gpus: number; runSeconds: number }) => void charged.push(i.gpus * i.runSeconds),
    receiveArtifact: async (i: { jobId: string }) => ({ fileId: `file-${i.jobId}` }),
  });
  return { states, charged, ...r };
}

describe("training", () => {
  it("a cancel mid-run stops the trainer and ends the run as cancelled", async () => {
    const following = gate();
    let followCancelled = false;
    const s = standIns(async () => {
      // Runs until cancelled, as the real follow does while the trainer works.
      const ctx = Context.current();
      following.open();
      const beat = setInterval(() => ctx.heartbeat(), 200);
      try {
        await ctx.cancelled;
      } catch (err) {
        followCancelled = true;
        throw err;
      } finally {
        clearInterval(beat);
      }
      throw new Error("unreachable");
    });
    await t.run(s.activities, async (taskQueue) => {
      const handle = await t.client.workflow.start("training", { taskQueue, workflowId: "training-cancel", args: [input("t1")] });
      await following.promise;
      await handle.signal(trainingCancelSignal);
      await signalsHandled(handle);
      const err = await handle.result().then(() => null, (e: unknown) => e);
      assert.ok(err instanceof WorkflowFailedError);
      assert.equal(err.cause?.message, "training t1 was cancelled");
      const p = await handle.query(trainingProgressQuery);
      assert.equal(p.phase, "cancelled");
      assert.equal(p.step, 7, "the trainer's last step, as cancelTrainer reported it");
      await waitFor("following the trainer to be cancelled", async () => followCancelled, 30_000, 50);
    });
    assert.deepEqual(s.names(), ["pickTrainingNode", "startTrainer", "setJobState", "followTrainer", "cancelTrainer", "recordTrainingUsage", "setJobState"]);
    assert.deepEqual(s.charged, [3], "a cancelled run is charged its GPU × the trainer's run time on the node");
    assert.deepEqual(s.states, ["running", "cancelled"]);
    const cancel = s.calls.find((c) => c.name === "cancelTrainer")!.input;
    assert.deepEqual(cancel, { nodeId: "n1", runId: "t1-1" });
  });

  it("a node lost mid-run: the run starts again on another node, and its artifact is kept", async () => {
    const s = standIns(async (i) => {
      if (i.attempt === 1) throw ApplicationFailure.create({ message: "node n1 stopped answering", type: "NodeLost", nonRetryable: true, details: [{ runSeconds: 4 }] });
      return succeeded(i.runId);
    });
    const result = await t.run(s.activities, (taskQueue) => t.client.workflow.execute("training", { taskQueue, workflowId: "training-node-lost", args: [input("t2")] }));
    assert.deepEqual(result, { fileId: "file-t2" });
    const picks = s.calls.filter((c) => c.name === "pickTrainingNode").map((c) => c.input);
    assert.deepEqual(picks, [{ gpuMemoryMiB: 8000, avoid: [] }, { gpuMemoryMiB: 8000, avoid: ["n1"] }]);
    const starts = s.calls.filter((c) => c.name === "startTrainer").map((c) => (c.input as { nodeId: string; runId: string }));
    assert.deepEqual(starts.map((x) => [x.nodeId, x.runId]), [["n1", "t2-1"], ["n2", "t2-2"]]);
    assert.deepEqual(s.states, ["running", "running", "completed"]);
    assert.equal(s.names().at(-2), "receiveArtifact");
    assert.deepEqual(s.charged, [4, 12.5], "the lost node's attempt is charged the run time it last reported, then the finished one");
    const statuses = s.calls.filter((c) => c.name === "recordTrainingUsage").map((c) => (c.input as { attempt: number; status?: number }));
    assert.deepEqual(statuses.map((c) => [c.attempt, c.status ?? 200]), [[1, 500], [2, 200]], "the lost attempt's row says it failed");
  });
});
