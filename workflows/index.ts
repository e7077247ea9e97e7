// What the Temporal worker loads: every workflow, by its exported name.
export { modelEntity } from "./model-entity.ts";
export { serveModel } from "./serve.ts";
export { rollingUpgrade } from "./rolling-upgrade.ts";
export { slurmLend } from "./slurm-lend.ts";
export { slurmReclaim } from "./slurm-reclaim.ts";
export { training } from "./training.ts";
export { comfyJob } from "./job.ts";
export { jobQueue } from "./job-queue.ts";
export { evacuateNode } from "./evacuate-node.ts";
export { canary } from "./canary.ts";
export { drainNode } from "./drain-node.ts";
export { fleetWatch } from "./fleet-watch.ts";
export { publishAdapter } from "./publish-adapter.ts";
export { batchRun } from "./batch.ts";
