// Every activity, bound to the worker's connections. Workflows import only the type.
import { adapterActivities } from "./adapters.ts";
import { agentActivities } from "./agents.ts";
import { batchActivities } from "./batches.ts";
import { canaryActivities } from "./canary.ts";
import { catalogActivities } from "./catalog.ts";
import type { ActivityDeps } from "./deps.ts";
import { jobActivities } from "./jobs.ts";
import { nodeActivities } from "./nodes.ts";
import { notifyActivities } from "./notify.ts";
import { onDemandActivities } from "./on-demand.ts";
import { placementActivities } from "./placement.ts";
import { slurmActivities } from "./slurm.ts";
import { trainingActivities } from "./training.ts";

export function createActivities(deps: ActivityDeps) {
  return { ...catalogActivities(deps), ...placementActivities(deps), ...agentActivities(deps), ...nodeActivities(deps), ...canaryActivities(deps), ...slurmActivities(deps), ...trainingActivities(deps), ...adapterActivities(deps), ...jobActivities(deps), ...onDemandActivities(deps), ...notifyActivities(), ...batchActivities(deps) };
}

export type Activities = ReturnType<typeof createActivities>;
