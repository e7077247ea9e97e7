// serve / scale: bring a model to N ready replicas of one version. New replicas are started,
// checked and added to the router before any surplus is retired, so a change never serves fewer.
// If starting fails, what this run started is stopped again.
import { setHandler } from "@temporalio/workflow";
import { progressQuery } from "./messages.ts";
import type { OperationProgress, ReplicaRef, ServeInput } from "./model-types.ts";
import { addReplicas, bringUp, quick, retire, undo } from "./replica-steps.ts";

export async function serveModel(input: ServeInput): Promise<{ replicas: ReplicaRef[] }> {
  const progress: OperationProgress = { kind: "serve", phase: "placing", wanted: input.replicas, ready: 0, message: "", replicas: [] };
  setHandler(progressQuery, () => progress);

  const { versionId } = await quick.ensureVersion({
    model: input.model,
    version: input.version,
    engine: input.engine,
    args: input.args,
    contextLength: input.contextLength,
  });
  const live = await quick.liveReplicas({ model: input.model });
  const same = live.filter((r) => r.version === input.version);
  const kept = same.slice(0, input.replicas);
  const surplus = [...same.slice(input.replicas), ...live.filter((r) => r.version !== input.version)];
  // A replica left starting by an earlier, interrupted run is checked before it takes traffic.
  for (const r of kept.filter((k) => !k.ready)) await bringUp(r);
  progress.ready = kept.length;
  progress.replicas = kept.map(({ ready: _ready, ...ref }) => ref);

  const need = input.replicas - kept.length;
  const started: ReplicaRef[] = [];
  if (need > 0) {
    progress.phase = "starting";
    progress.message = `starting ${need} replica(s)`;
    try {
      await addReplicas({ model: input.model, version: input.version, versionId, engine: input.engine, args: input.args }, need, started, {
        fetch: (f) => {
          (progress.fetch ??= {})[f.nodeId] = f;
          if (progress.phase !== "starting" && progress.phase !== "fetching") return;
          progress.phase = f.done ? "starting" : "fetching";
          progress.message = f.done ? `weights on ${f.nodeId}` : `fetching weights to ${f.nodeId}: ${f.bytes} of ${f.total || "?"} bytes`;
        },
        started: () => void (progress.phase = "waiting-ready"),
        ready: (r) => {
          progress.ready += 1;
          progress.replicas.push(r);
          progress.message = `${progress.ready}/${progress.wanted} ready`;
        },
      });
    } catch (err) {
      progress.phase = "failed";
      progress.message = innermostMessage(err);
      await undo(started);
      throw err;
    }
  }

  if (surplus.length > 0) {
    progress.phase = "draining";
    progress.message = `retiring ${surplus.length} replica(s)`;
    await retire(surplus);
  }
  progress.phase = "done";
  progress.message = `${progress.ready}/${progress.wanted} ready`;
  return { replicas: progress.replicas };
}

/** What went wrong, not "activity task failed": the innermost cause's message. */
function innermostMessage(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}
