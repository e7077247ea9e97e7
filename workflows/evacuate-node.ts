// evacuate: move one model's replicas off a node. Replacements start elsewhere first (the node is
// cordoned or lost, so placement skips it), then the replicas on the node are retired.
import { setHandler } from "@temporalio/workflow";
import { progressQuery } from "./messages.ts";
import type { OperationProgress, ReplicaRef } from "./model-types.ts";
import { addReplicas, quick, retire } from "./replica-steps.ts";

export async function evacuateNode(input: { model: string; nodeId: string }): Promise<{ moved: number }> {
  const live = await quick.liveReplicas({ model: input.model });
  const onNode = live.filter((r) => r.nodeId === input.nodeId).map(({ ready: _r, ...ref }) => ref);
  const progress: OperationProgress = { kind: "evacuate", phase: "starting", wanted: onNode.length, ready: 0, message: `moving ${onNode.length} replica(s) off ${input.nodeId}`, replicas: [] };
  setHandler(progressQuery, () => progress);

  const byVersion = new Map<string, ReplicaRef[]>();
  for (const r of onNode) byVersion.set(r.version, [...(byVersion.get(r.version) ?? []), r]);
  for (const [version, replicas] of byVersion) {
    const spec = await quick.versionSpec({ model: input.model, version });
    const started: ReplicaRef[] = [];
    await addReplicas(spec, replicas.length, started, { ready: (r) => void (progress.ready += 1, progress.replicas.push(r)) }, [input.nodeId]);
  }
  progress.phase = "draining";
  await retire(onNode);
  progress.phase = "done";
  return { moved: onNode.length };
}
