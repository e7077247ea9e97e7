// model/<name>/publish/<n>: a LoRA adapter loaded onto the model's ready replicas ONE AT A TIME —
// file onto the node, loaded by the engine, listed in its /v1/models — so a model never has two
// replicas busy loading at once. Run by the entity workflow, so no serve, scale or upgrade of the
// model runs meanwhile; replicas started later load the model's adapters as they come up. Once
// every replica has it, the adapter is ready and the gateways route its name to the model.
import { ApplicationFailure, CancellationScope, proxyActivities, setHandler } from "@temporalio/workflow";
import type { Activities } from "../activities/index.ts";
import { ADAPTER_LOAD } from "./activity-options.ts";
import { progressQuery } from "./messages.ts";
import type { OperationProgress, PublishInput } from "./model-types.ts";
import { quick } from "./replica-steps.ts";

const loading = proxyActivities<Activities>(ADAPTER_LOAD);

export async function publishAdapter(input: PublishInput): Promise<{ loaded: string[] }> {
  const progress: OperationProgress = { kind: "publish", phase: "loading", wanted: 0, ready: 0, message: "", replicas: [] };
  setHandler(progressQuery, () => progress);
  const loaded: string[] = [];
  try {
    const targets = await quick.adapterTargets({ model: input.model });
    progress.wanted = targets.length;
    progress.replicas = targets;
    for (const replica of targets) {
      progress.message = `loading ${input.name} on ${replica.id}`;
      const r = await loading.loadAdapterOnto({ adapterId: input.adapterId, replica });
      if (r) loaded.push(r.replicaId);
      progress.ready += 1;
    }
    await quick.setAdapterState({ adapterId: input.adapterId, state: "ready" });
    progress.phase = "done";
    progress.message = `${input.name} on ${loaded.length} replica(s)`;
    return { loaded };
  } catch (err) {
    progress.phase = "failed";
    progress.message = innermost(err);
    await CancellationScope.nonCancellable(() => quick.setAdapterState({ adapterId: input.adapterId, state: "failed", error: progress.message }));
    throw ApplicationFailure.nonRetryable(`publish of ${input.name} to ${input.model} failed: ${progress.message}`, "PublishFailed");
  }
}

function innermost(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}
