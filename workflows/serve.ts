// serve / scale: bring a model to N ready replicas of one version. New replicas are started,
// checked and added to the router before any surplus is stopped, so a change never serves fewer.
// If starting fails, what this run started is stopped again.
import { CancellationScope, proxyActivities, setHandler, uuid4 } from "@temporalio/workflow";
import type { Activities } from "../activities/index.ts";
import { progressQuery } from "./messages.ts";
import type { OperationProgress, ReplicaRef, ServeInput } from "./model-types.ts";

const quick = proxyActivities<Activities>({
  startToCloseTimeout: "30 seconds",
  retry: { initialInterval: "500 ms", maximumInterval: "10 seconds", maximumAttempts: 8 },
});

// Waiting for an engine can take long (weights load); the heartbeat, not the total, detects a
// worker that died, so a retry on another worker follows within seconds.
const waiting = proxyActivities<Activities>({
  startToCloseTimeout: "20 minutes",
  heartbeatTimeout: "5 seconds",
  retry: { initialInterval: "1 second", maximumInterval: "10 seconds", maximumAttempts: 5 },
});

/** Wait for an engine to load, send it one real request, then let the router use it. */
async function bringUp(replica: ReplicaRef): Promise<void> {
  await waiting.waitReplicaReady({ replica });
  await quick.smokeTest({ replica });
  await quick.markReplicaReady({ replica });
}

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
    try {
      progress.message = `placing ${need} replica(s)`;
      const nodes = await quick.placeReplicas({ model: input.model, version: input.version, count: need });
      progress.phase = "starting";
      await Promise.all(
        nodes.map(async (node) => {
          const id = `${input.model}-${uuid4().slice(0, 8)}`;
          // Known before the call, so an undo also stops a replica whose start timed out.
          started.push({ id, model: input.model, version: input.version, nodeId: node.nodeId, url: "" });
          const replica = await quick.startReplica({
            replicaId: id,
            model: input.model,
            version: input.version,
            versionId,
            engine: input.engine,
            args: input.args,
            nodeId: node.nodeId,
            gpus: node.gpus,
          });
          progress.phase = "waiting-ready";
          await bringUp(replica);
          progress.ready += 1;
          progress.replicas.push(replica);
          progress.message = `${progress.ready}/${progress.wanted} ready`;
        }),
      );
    } catch (err) {
      progress.phase = "failed";
      progress.message = err instanceof Error ? err.message : String(err);
      await CancellationScope.nonCancellable(() => Promise.all(started.map((replica) => quick.stopReplica({ replica }))));
      throw err;
    }
  }

  if (surplus.length > 0) {
    progress.phase = "stopping";
    progress.message = `stopping ${surplus.length} replica(s)`;
    await Promise.all(surplus.map((replica) => quick.stopReplica({ replica })));
  }
  progress.phase = "done";
  progress.message = `${progress.ready}/${progress.wanted} ready`;
  return { replicas: progress.replicas };
}
