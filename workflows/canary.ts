// canary: a new version takes a share of the traffic; over windows its error rate and median
// latency, as the gateways measured them, are compared with the stable version's. A window that
// fails rolls it back; the whole duration passing promotes it (a rolling upgrade of the rest).
// `promote` and `abort` decide sooner. The decision and its figures are kept and returned.
import { ApplicationFailure, condition, executeChild, setHandler, workflowInfo } from "@temporalio/workflow";
import { abortSignal, progressQuery, promoteSignal } from "./messages.ts";
import type { CanaryCommand, CanaryDecision, CanaryWindow, OperationProgress, ReplicaRef } from "./model-types.ts";
import { addReplicas, quick, retire, undo } from "./replica-steps.ts";
import { rollingUpgrade } from "./rolling-upgrade.ts";
import { operationSearchAttributes } from "./search-attributes.ts";

export interface CanaryInput extends CanaryCommand {
  model: string;
  /** Replicas the model serves; the promotion keeps that many. */
  serving: number;
}

/** A canary this little slower is as fast, whatever the ratio: small latencies are mostly noise. */
export const LATENCY_NOISE_MS = 10;

/** Judges one window. Pure, so it is tested on its own. */
export function judge(c: Pick<CanaryCommand, "maxErrorRate" | "maxLatencyRatio" | "minRequests">, stable: CanaryWindow["stable"], canary: CanaryWindow["canary"]): CanaryWindow["verdict"] {
  if (canary.requests < c.minRequests) return "too-few";
  if (canary.errorRate > c.maxErrorRate) return "errors";
  if (stable.p50Ms !== null && canary.p50Ms !== null && stable.p50Ms > 0) {
    if (canary.p50Ms / stable.p50Ms > c.maxLatencyRatio && canary.p50Ms - stable.p50Ms > LATENCY_NOISE_MS) return "latency";
  }
  return "ok";
}

export async function canary(input: CanaryInput): Promise<CanaryDecision> {
  let promoteNow = false;
  let abortNow = false;
  const windows: CanaryWindow[] = [];
  const progress: OperationProgress = {
    kind: "canary",
    phase: "starting",
    wanted: input.replicas,
    ready: 0,
    message: "",
    replicas: [],
    canary: { windows, decision: null },
  };
  setHandler(progressQuery, () => progress);
  setHandler(promoteSignal, () => void (promoteNow = true));
  setHandler(abortSignal, () => void (abortNow = true));

  const live = await quick.liveReplicas({ model: input.model });
  const stable = live.find((r) => r.version !== input.version)?.version;
  if (!stable) throw ApplicationFailure.nonRetryable(`model ${input.model} serves no other version to compare ${input.version} with`);
  const { versionId } = await quick.ensureVersion({ model: input.model, version: input.version, engine: input.engine, args: input.args, contextLength: input.contextLength });
  const started: ReplicaRef[] = [];
  try {
    await addReplicas({ model: input.model, version: input.version, versionId, engine: input.engine, args: input.args }, input.replicas, started, {
      started: () => void (progress.phase = "waiting-ready"),
      ready: (r) => void (progress.ready += 1, progress.replicas.push(r)),
    });
  } catch (err) {
    await undo(started);
    throw err;
  }

  const finish = async (decision: CanaryDecision): Promise<CanaryDecision> => {
    progress.canary!.decision = decision;
    progress.message = `${decision.decision}: ${decision.reason}`;
    return decision;
  };
  const rollBack = async (reason: string): Promise<CanaryDecision> => {
    progress.phase = "rolling-back";
    await quick.setRouteWeights({ model: input.model, weights: null });
    await retire(started);
    progress.phase = "done";
    return finish({ decision: "rolled-back", reason, windows });
  };

  await quick.setRouteWeights({ model: input.model, weights: { [stable]: 100 - input.weight, [input.version]: input.weight } });
  progress.phase = "starting";
  progress.message = `${input.weight}% of requests to ${input.version}, judged every ${input.windowMs / 1000} s`;
  const end = Date.now() + input.durationMs;
  while (Date.now() < end && !promoteNow) {
    const from = Date.now();
    const decided = await condition(() => promoteNow || abortNow, Math.min(input.windowMs, Math.max(1, end - Date.now())));
    if (abortNow) return rollBack("aborted by an operator");
    if (decided) break;
    const figures = await quick.versionFigures({ model: input.model, versions: [stable, input.version], sinceMs: from });
    const w: CanaryWindow = { at: Date.now(), stable: figures[stable]!, canary: figures[input.version]!, verdict: "ok" };
    w.verdict = judge(input, w.stable, w.canary);
    windows.push(w);
    if (w.verdict === "errors") return rollBack(`error rate ${(w.canary.errorRate * 100).toFixed(1)}% over the ${(input.maxErrorRate * 100).toFixed(1)}% allowed`);
    if (w.verdict === "latency") return rollBack(`median latency ${w.canary.p50Ms?.toFixed(1)} ms is over ${input.maxLatencyRatio}× the stable ${w.stable.p50Ms?.toFixed(1)} ms`);
  }
  if (!promoteNow && windows.length > 0 && windows.every((w) => w.verdict === "too-few")) return rollBack("too few requests reached the canary to judge it");

  progress.phase = "draining";
  progress.message = `promoting ${input.version}: rolling upgrade of the rest`;
  await quick.setRouteWeights({ model: input.model, weights: null });
  await executeChild(rollingUpgrade, {
    workflowId: `${workflowInfo().workflowId}/promote`,
    args: [{ model: input.model, version: input.version, engine: input.engine, args: input.args, contextLength: input.contextLength, wave: input.wave, replicas: input.serving }],
    typedSearchAttributes: operationSearchAttributes(input.model, "upgrade"),
    memo: { summary: `promote canary ${input.version} of ${input.model}` },
  });
  progress.phase = "done";
  return finish({ decision: "promoted", reason: promoteNow ? "promoted by an operator" : `${windows.length} window(s) within limits`, windows });
}
