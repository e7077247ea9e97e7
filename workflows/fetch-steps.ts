// Weights onto the nodes replicas were placed on, before their engines start: one fetch per node,
// whatever the number of its replicas. The fetch has no limit on its total time; its heartbeat
// timeout (each progress message is a heartbeat) fails an attempt that stalls, and the retry
// resumes where the node's download stopped.
import { proxyActivities, setHandler } from "@temporalio/workflow";
import type { Activities } from "../activities/index.ts";
import { QUICK, weightFetch } from "./activity-options.ts";
import type { WeightsPlan } from "../activities/fetch-weights.ts";
import { fetchProgressSignal } from "./messages.ts";
import type { FetchProgressReport } from "./model-types.ts";

const lookup = proxyActivities<Activities>(QUICK);

/**
 * The weights a replica's engine loads, given its node: fetched there once (the path the agent
 * returns), or the catalog's hub id. `onProgress` hears the fetches' progress.
 */
export function weightsFor(versionId: string, onProgress?: (p: FetchProgressReport) => void): (nodeId: string, replicaId: string) => Promise<string> {
  if (onProgress) setHandler(fetchProgressSignal, onProgress);
  let plan: Promise<WeightsPlan> | undefined;
  const byNode = new Map<string, Promise<string>>();
  const fetchOn = async (nodeId: string, replicaId: string): Promise<string> => {
    plan ??= lookup.weightsPlan({ versionId });
    const p = await plan;
    if (!p.fetch) return p.weights;
    const fetching = proxyActivities<Activities>(weightFetch(p.stallMs));
    const got = await fetching.fetchWeights({ replicaId, nodeId, fetch: p.fetch, report: onProgress !== undefined });
    return got.path;
  };
  return (nodeId, replicaId) => {
    let w = byNode.get(nodeId);
    if (!w) byNode.set(nodeId, (w = fetchOn(nodeId, replicaId)));
    return w;
  };
}
