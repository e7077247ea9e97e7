// Every activity, bound to the worker's connections. Workflows import only the type.
import { agentActivities } from "./agents.ts";
import { catalogActivities } from "./catalog.ts";
import type { ActivityDeps } from "./deps.ts";
import { nodeActivities } from "./nodes.ts";
import { placementActivities } from "./placement.ts";

export function createActivities(deps: ActivityDeps) {
  return { ...catalogActivities(deps), ...placementActivities(deps), ...agentActivities(deps), ...nodeActivities(deps) };
}

export type Activities = ReturnType<typeof createActivities>;
