// node/<id>/drain: cordon a node, have every model with replicas there move them elsewhere (each
// model's own workflow does it, one operation at a time), and wait until the node is empty.
import { ApplicationFailure, getExternalWorkflowHandle, proxyActivities, setHandler, sleep } from "@temporalio/workflow";
import type { Activities } from "../activities/index.ts";
import { DRAIN } from "./activity-options.ts";
import { evacuateSignal, progressQuery } from "./messages.ts";
import { modelWorkflowId, type OperationProgress } from "./model-types.ts";

const act = proxyActivities<Activities>(DRAIN);

const POLL_MS = 1000;

export async function drainNode(input: { nodeId: string; timeoutMs: number }): Promise<{ moved: number }> {
  await act.setCordon({ nodeId: input.nodeId, cordoned: true });
  const first = await act.modelsOnNode({ nodeId: input.nodeId });
  const progress: OperationProgress = { kind: "drain", phase: "draining", wanted: first.replicas, ready: 0, message: `moving ${first.replicas} replica(s)`, replicas: [] };
  setHandler(progressQuery, () => progress);
  for (const model of first.models) await getExternalWorkflowHandle(modelWorkflowId(model)).signal(evacuateSignal, { nodeId: input.nodeId });
  const deadline = Date.now() + input.timeoutMs;
  for (;;) {
    const now = await act.modelsOnNode({ nodeId: input.nodeId });
    progress.ready = first.replicas - now.replicas;
    progress.message = `${now.replicas} replica(s) left on ${input.nodeId}`;
    if (now.replicas === 0) break;
    if (Date.now() > deadline) throw ApplicationFailure.nonRetryable(`${now.replicas} replica(s) of ${now.models.join(", ")} are still on ${input.nodeId}: no room elsewhere?`, "DrainTimeout");
    await sleep(POLL_MS);
  }
  progress.phase = "done";
  return { moved: first.replicas };
}
