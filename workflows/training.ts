// training/<id>: a LoRA adapter trained on a node's spare GPU. A node whose card has the memory
// free is picked, its agent starts the trainer, the run is followed to its end, and the artifact is
// received into the file store and kept. A node lost mid-run fails that attempt (charged the run
// time the node last reported); the next starts from the beginning on another node, up to
// maxAttempts. Cancel (a signal) stops the trainer's whole process group.
import { ActivityFailure, ApplicationFailure, CancellationScope, condition, patched, proxyActivities, setHandler } from "@temporalio/workflow";
import type { Activities } from "../activities/index.ts";
import { TRAINING_FOLLOWING, TRAINING_PLACING, TRAINING_QUICK } from "./activity-options.ts";
import { trainingCancelSignal, trainingProgressQuery, type TrainingInput, type TrainingProgress } from "./training-types.ts";

const quick = proxyActivities<Activities>(TRAINING_QUICK);
const placing = proxyActivities<Activities>(TRAINING_PLACING);
const following = proxyActivities<Activities>(TRAINING_FOLLOWING);

export async function training(input: TrainingInput): Promise<{ fileId: string }> {
  let cancelled = false;
  const progress: TrainingProgress = { kind: "training", phase: "placing", nodeId: null, attempt: 0, step: 0, steps: 0, loss: 0, peakMemoryMiB: 0, message: "", wanted: 0, ready: 0 };
  setHandler(trainingProgressQuery, () => progress);
  setHandler(trainingCancelSignal, () => void (cancelled = true));
  const setState = (state: "queued" | "running" | "completed" | "failed" | "cancelled", extra: { error?: string; resultId?: string } = {}) =>
    CancellationScope.nonCancellable(() => quick.setJobState({ id: input.id, state, progress: { ...progress }, ...extra }));

  const avoid: string[] = [];
  for (let attempt = 1; attempt <= input.maxAttempts; attempt++) {
    progress.attempt = attempt;
    progress.phase = "placing";
    const { nodeId, gpu } = await placing.pickTrainingNode({ gpuMemoryMiB: input.gpuMemoryMiB, avoid });
    if (cancelled) break;
    progress.nodeId = nodeId;
    const runId = `${input.id}-${attempt}`;
    await quick.startTrainer({ nodeId, runId, gpu, base: input.base, dataFileId: input.dataFileId, params: input.params, gguf: input.gguf });
    progress.phase = "running";
    progress.message = `on ${nodeId}, GPU ${gpu}`;
    await setState("running");

    const scope = new CancellationScope();
    const follow = scope.run(() => following.followTrainer({ jobId: input.id, nodeId, runId, attempt }));
    const ended = follow.then(() => true, () => true);
    await Promise.race([ended, condition(() => cancelled)]);
    // The trainer holds one GPU from its start to its exit on the node; every attempt that ran is charged.
    // Patched: a run started before this charge existed replays without it.
    const charge = async (runSeconds: number, status = 200) => {
      if (patched("training-usage")) await CancellationScope.nonCancellable(() => quick.recordTrainingUsage({ jobId: input.id, attempt, model: input.base, personId: input.personId ?? null, gpus: 1, runSeconds, status }));
    };
    if (cancelled) {
      scope.cancel();
      const { runSeconds, ...last } = await CancellationScope.nonCancellable(() => quick.cancelTrainer({ nodeId, runId }));
      Object.assign(progress, last);
      await charge(runSeconds);
      break;
    }
    let s;
    try {
      s = await follow;
    } catch (err) {
      if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.type === "NodeLost") {
        progress.message = `attempt ${attempt} failed: ${err.cause.message}`;
        avoid.push(nodeId);
        // The GPU was held for as long as the node last said the trainer had run. Patched: a run
        // that lost a node before this charge existed replays without it.
        if (patched("charge-lost-training")) await charge((err.cause.details?.[0] as { runSeconds?: number } | undefined)?.runSeconds ?? 0, 500);
        continue;
      }
      throw err;
    }
    Object.assign(progress, { step: s.step, steps: s.steps, loss: s.loss, peakMemoryMiB: s.peakMemoryMib, wanted: s.steps, ready: s.step });
    await charge(s.runSeconds);
    if (s.state === "TRAINER_STATE_CANCELLED") break;
    if (s.state !== "TRAINER_STATE_SUCCEEDED") {
      progress.phase = "failed";
      progress.message = s.error;
      await setState("failed", { error: s.error });
      throw ApplicationFailure.nonRetryable(`training ${input.id} failed: ${s.error}`, "TrainerFailed");
    }
    progress.phase = "receiving";
    progress.message = `${s.artifactName}, ${s.artifactBytes} bytes`;
    const { fileId } = await following.receiveArtifact({ jobId: input.id, nodeId, runId, name: s.artifactName, bytes: s.artifactBytes, sha256: s.artifactSha256 });
    progress.phase = "done";
    await setState("completed", { resultId: fileId });
    return { fileId };
  }

  if (cancelled) {
    progress.phase = "cancelled";
    progress.message = "cancelled by an operator";
    await setState("cancelled", { error: "cancelled" });
    throw ApplicationFailure.nonRetryable(`training ${input.id} was cancelled`, "Cancelled");
  }
  progress.phase = "failed";
  await setState("failed", { error: `no attempt finished: ${progress.message}` });
  throw ApplicationFailure.nonRetryable(`training ${input.id}: ${input.maxAttempts} attempt(s) lost their node`, "AttemptsExhausted");
}
