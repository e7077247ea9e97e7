// fleet/watch: one workflow for the whole fleet. It looks every few seconds for nodes unheard from
// (their models are told to move replicas elsewhere, once per loss) and for replicas whose engine
// died (their models are told to repair), and has agents stop engines nobody wants.
import { continueAsNew, getExternalWorkflowHandle, proxyActivities, sleep } from "@temporalio/workflow";
import type { Activities } from "../activities/index.ts";
import { FLEET_WATCH } from "./activity-options.ts";
import { evacuateSignal, repairSignal } from "./messages.ts";
import { modelWorkflowId } from "./model-types.ts";

const act = proxyActivities<Activities>(FLEET_WATCH);

export interface FleetWatchInput {
  everyMs: number;
  lostMs: number;
  /** Nodes already handled as lost; forgotten when they are heard from again. */
  lost: string[];
}

/** Looks before continuing as new, so the history stays small. */
const ROUNDS = 200;

async function tell(model: string, fn: (h: ReturnType<typeof getExternalWorkflowHandle>) => Promise<void>): Promise<void> {
  // A model without an entity workflow has nothing to repair.
  await fn(getExternalWorkflowHandle(modelWorkflowId(model))).catch(() => undefined);
}

export async function fleetWatch(input: FleetWatchInput): Promise<void> {
  const lost = new Set(input.lost);
  for (let round = 0; round < ROUNDS; round++) {
    const check = await act.fleetCheck({ lostMs: input.lostMs });
    for (const id of check.fresh) lost.delete(id);
    for (const node of check.lost) {
      if (lost.has(node.nodeId)) continue;
      lost.add(node.nodeId);
      for (const model of node.models) await tell(model, (h) => h.signal(evacuateSignal, { nodeId: node.nodeId }));
    }
    for (const model of check.died) await tell(model, (h) => h.signal(repairSignal, { reason: "a replica's engine died" }));
    await sleep(input.everyMs);
  }
  await continueAsNew<typeof fleetWatch>({ ...input, lost: [...lost] });
}
