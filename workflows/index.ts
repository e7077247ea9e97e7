// What the Temporal worker loads: every workflow, by its exported name.
export { modelEntity } from "./model-entity.ts";
export { serveModel } from "./serve.ts";
export { rollingUpgrade } from "./rolling-upgrade.ts";
export { evacuateNode } from "./evacuate-node.ts";
export { drainNode } from "./drain-node.ts";
export { fleetWatch } from "./fleet-watch.ts";
