// The placement activity: the store's view of the fleet fed to the pure `place` function.
import { ApplicationFailure } from "@temporalio/activity";
import type { ActivityDeps } from "./deps.ts";
import { fleetView, requirementFor } from "./fleet.ts";
import { place } from "./placement-plan.ts";

export function placementActivities(deps: ActivityDeps) {
  return {
    async placeReplicas(input: { model: string; version: string; count: number; avoid?: string[] }): Promise<{ nodeId: string; gpus: number[] }[]> {
      const fleet = await fleetView(deps, input.model);
      const req = await requirementFor(deps, input.model, input.version, input.count, input.avoid ?? []);
      const p = place(fleet, req);
      // Nothing fits now; an agent may register or free its GPUs shortly, so Temporal retries.
      if (!p.ok) throw ApplicationFailure.retryable(`cannot place ${input.count} replica(s) of ${input.model}: ${p.reason}`, "NoPlacement");
      return p.replicas;
    },
  };
}
