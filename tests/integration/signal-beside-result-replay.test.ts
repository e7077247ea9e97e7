// An operator's signal that reaches a workflow in the same workflow task as an activity's result
// must replay as it ran. A worker taking the task up cold runs the signal's handler first, then the
// code after the awaited result, which reads the flag the handler set (rolling upgrade's pause,
// canary's promote and abort). The model workflow's handlers decide later for updates
// (signal-decisions.ts); these workflows read their flags in place, which is safe only if replay
// hands the two over in the same order. Here that case is made on purpose against the real
// Temporal server: the workflow worker stops while an activity is held, the activity completes and
// the signal lands with no worker polling, and a fresh worker gets both in one task. The history
// is then replayed from its start. The activities are stand-ins: only the workflows are tested.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import type { WorkflowHandle } from "@temporalio/client";
import { Worker } from "@temporalio/worker";
import { abortSignal, pauseSignal, promoteSignal, resumeSignal } from "../../workflows/messages.ts";
import type { CanaryDecision, OperationProgress, ReplicaRef } from "../../workflows/model-types.ts";
import { eventKinds, standInEnv, uniqueQueue, type StandInEnv } from "../helpers/workflow-standins.ts";

let env: StandInEnv;
before(async () => {
  env = await standInEnv();
});
after(async () => {
  await env?.close();
});

const ref = (id: string, version: string): ReplicaRef => ({ id, model: "m", version, nodeId: "n1", url: "http://127.0.0.1:1" });

/** Stand-ins for the activities a canary and a rolling upgrade call; `held` is held on its first call until released. */
function standIns(held: "stopReplica" | "versionFigures") {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let reached!: () => void;
  const holding = new Promise<void>((r) => (reached = r));
  let calls = 0;
  const hold = async () => {
    if (++calls > 1) return;
    reached();
    await released;
  };
  const activities = {
    ensureVersion: async () => ({ versionId: "v2-id" }),
    liveReplicas: async () => [{ ...ref("a", "v1"), ready: true }, { ...ref("b", "v1"), ready: true }],
    versionSpec: async () => ({ model: "m", version: "v1", versionId: "v1-id", engine: "sim", args: [] }),
    placeReplicas: async (i: { replicaIds: string[] }) => i.replicaIds.map((replicaId) => ({ replicaId, nodeId: "n1", gpus: [] })),
    weightsPlan: async () => ({ fetch: null, weights: "w" }),
    startReplica: async (i: { replicaId: string }) => ref(i.replicaId, "v2"),
    bringUpReplica: async () => {},
    drainReplica: async () => {},
    setRouteWeights: async () => {},
    stopReplica: async () => {
      if (held === "stopReplica") await hold();
    },
    versionFigures: async (i: { versions: string[] }) => {
      if (held === "versionFigures") await hold();
      return Object.fromEntries(i.versions.map((v) => [v, { requests: 50, errors: 0, errorRate: 0, p50Ms: 5 }]));
    },
  };
  return { activities, holding, release };
}

/**
 * Starts the workflow, stops its worker once `held` is reached, releases the activity, sends the
 * signal, then lets a fresh worker run `rest`. Returns the history, checked to hold the activity's
 * result and the signal in one workflow task.
 */
async function signalBesideResult<T>(
  workflow: string,
  args: unknown[],
  held: "stopReplica" | "versionFigures",
  signal: (h: WorkflowHandle) => Promise<void>,
  rest: (h: WorkflowHandle) => Promise<T>,
): Promise<{ result: T; history: Awaited<ReturnType<WorkflowHandle["fetchHistory"]>>; workflowId: string }> {
  const taskQueue = uniqueQueue("signal-beside-result");
  const stand = standIns(held);
  // No cache: every task is taken up cold, as by a worker started after a crash.
  const workers = await env.workers(taskQueue, stand.activities, { cold: true });
  return workers.activities.runUntil(async () => {
    const handle = await env.temporal.client.workflow.start(workflow, { taskQueue, workflowId: taskQueue, args });
    await (await workers.workflows()).runUntil(stand.holding);
    stand.release();
    // The result is recorded before the signal is sent: both wait for the next worker.
    await waitForEvent(handle, "activityTaskCompleted", held);
    await signal(handle);
    const result = await (await workers.workflows()).runUntil(rest(handle));
    const history = await handle.fetchHistory();
    const kinds = eventKinds(history);
    const signalled = kinds.indexOf("workflowExecutionSignaled");
    assert.ok(signalled > 0, "the signal is in the history");
    assert.equal(kinds[signalled - 2], "activityTaskCompleted", "the held activity's result came just before the signal");
    assert.equal(kinds[signalled - 1], "workflowTaskScheduled", "no workflow task ran between the result and the signal");
    assert.equal(kinds[signalled + 1], "workflowTaskStarted", "one task took both");
    return { result, history, workflowId: handle.workflowId };
  });
}

/** Waits until the last scheduled activity (the held one) has its result in the history. */
async function waitForEvent(handle: WorkflowHandle, kind: string, activity: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const history = await handle.fetchHistory();
    const kinds = eventKinds(history);
    const names = history.events!.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name);
    const scheduled = names.lastIndexOf(activity);
    if (scheduled >= 0 && kinds.indexOf(kind, scheduled) > scheduled) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${activity}'s result never reached the history`);
}

const upgrade = { model: "m", version: "v2", engine: "sim", args: [], wave: 1, replicas: 2 };
const canary = {
  model: "m", serving: 2, version: "v2", engine: "sim", args: [], weight: 10, durationMs: 600_000, windowMs: 300,
  maxErrorRate: 0.05, maxLatencyRatio: 2, minRequests: 10, replicas: 1, wave: 1,
};

it("a rolling upgrade paused in the task of a replica's stop pauses before its next wave, and replays", async () => {
  const { result, history, workflowId } = await signalBesideResult("rollingUpgrade", [upgrade], "stopReplica", (h) => h.signal(pauseSignal), async (h) => {
    // Paused at once: the handler ran before the code after the stop.
    const p = await h.query<OperationProgress>("progress");
    assert.equal(p.phase, "paused");
    assert.equal(p.waves?.done, 1, "paused after the first wave");
    await h.signal(resumeSignal);
    return h.result();
  });
  assert.deepEqual(result, { replicas: 2 });
  await Worker.runReplayHistory({ workflowBundle: env.bundle }, history, workflowId);
});

it("a canary promoted in the task of a window's figures is promoted, and replays", async () => {
  const { result, history, workflowId } = await signalBesideResult("canary", [canary], "versionFigures", (h) => h.signal(promoteSignal), (h) => h.result() as Promise<CanaryDecision>);
  assert.equal(result.decision, "promoted");
  assert.equal(result.reason, "promoted by an operator");
  assert.equal(result.windows.length, 1, "the window whose figures came with the signal is kept");
  await Worker.runReplayHistory({ workflowBundle: env.bundle }, history, workflowId);
});

it("a canary aborted in the task of a window's figures rolls back, and replays", async () => {
  const { result, history, workflowId } = await signalBesideResult("canary", [canary], "versionFigures", (h) => h.signal(abortSignal), (h) => h.result() as Promise<CanaryDecision>);
  assert.equal(result.decision, "rolled-back");
  assert.equal(result.reason, "aborted by an operator");
  await Worker.runReplayHistory({ workflowBundle: env.bundle }, history, workflowId);
});
