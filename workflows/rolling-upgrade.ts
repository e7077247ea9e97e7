// Rolling upgrade: replace a model's replicas with another version in waves. Each wave starts its
// new replicas first (surge), waits until they are ready and smoke-tested and in the router, then
// retires as many old ones (drained, then stopped): never fewer serving than asked. Pause, resume
// and abort arrive as signals; abort, or a wave that fails, rolls back to the old version.
import { ApplicationFailure, condition, setHandler } from "@temporalio/workflow";
import { abortSignal, pauseSignal, progressQuery, resumeSignal } from "./messages.ts";
import type { OperationProgress, ReplicaRef, UpgradeInput } from "./model-types.ts";
import { addReplicas, quick, retire, undo, type VersionSpec } from "./replica-steps.ts";

export async function rollingUpgrade(input: UpgradeInput): Promise<{ replicas: number }> {
  let paused = false;
  let aborted = false;
  const progress: OperationProgress = { kind: "upgrade", phase: "placing", wanted: 0, ready: 0, message: "", replicas: [] };
  setHandler(progressQuery, () => progress);
  setHandler(pauseSignal, () => void (paused = true));
  setHandler(resumeSignal, () => void (paused = false));
  setHandler(abortSignal, () => void (aborted = true));

  const { versionId } = await quick.ensureVersion({ model: input.model, version: input.version, engine: input.engine, args: input.args, contextLength: input.contextLength });
  const target: VersionSpec = { model: input.model, version: input.version, versionId, engine: input.engine, args: input.args };
  const live = (await quick.liveReplicas({ model: input.model })).map(({ ready: _r, ...ref }) => ref);
  // Replicas already on the target version (a promoted canary's) stay; the rest are replaced.
  const already = live.filter((r) => r.version === input.version);
  const old = live.filter((r) => r.version !== input.version);
  const wanted = input.replicas ?? live.length;
  if (wanted === 0) throw ApplicationFailure.nonRetryable(`model ${input.model} serves no replica: serve it first`);
  const previous = old[0] ? await quick.versionSpec({ model: input.model, version: old[0].version }) : null;
  const waves = Math.ceil(Math.max(old.length, wanted - already.length) / input.wave);
  progress.wanted = wanted;
  progress.waves = { done: 0, total: waves };

  const added: ReplicaRef[] = [];
  const serving = () => already.length + added.length;
  const retired: ReplicaRef[] = [];
  const rollBack = async (why: string): Promise<never> => {
    progress.phase = "rolling-back";
    progress.message = why;
    if (previous && retired.length > 0) {
      const back: ReplicaRef[] = [];
      await addReplicas(previous, retired.length, back);
    }
    await retire(added);
    progress.phase = "failed";
    throw ApplicationFailure.nonRetryable(`${why}; rolled back to ${previous?.version ?? "nothing"}`, "UpgradeRolledBack");
  };

  const remaining = [...old];
  while (remaining.length > 0 || serving() < wanted) {
    if (paused) {
      progress.phase = "paused";
      await condition(() => !paused || aborted);
    }
    if (aborted) return rollBack("aborted by an operator");
    const add = Math.max(0, Math.min(input.wave, wanted - serving()));
    const out = remaining.splice(0, Math.min(input.wave, remaining.length));
    progress.phase = "starting";
    progress.message = `wave ${progress.waves.done + 1}/${waves}: starting ${add}, retiring ${out.length}`;
    const wave: ReplicaRef[] = [];
    try {
      await addReplicas(target, add, wave, {
        started: () => void (progress.phase = "waiting-ready"),
        ready: (r) => {
          added.push(r);
          progress.ready = serving();
          progress.replicas = [...already, ...added];
        },
      });
    } catch (err) {
      await undo(wave.filter((r) => !added.some((a) => a.id === r.id)));
      return rollBack(`wave ${progress.waves.done + 1} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    progress.phase = "draining";
    await retire(out);
    retired.push(...out);
    progress.waves.done += 1;
  }
  progress.phase = "done";
  progress.message = `${serving()} replica(s) on ${input.version}`;
  return { replicas: serving() };
}
