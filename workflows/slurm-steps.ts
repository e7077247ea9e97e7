// Activity proxies of the Slurm workflows: quick calls, and waits that heartbeat. The waits retry
// without a limit of attempts, so an agent or a worker restarted mid-way is waited for, not failed.
import { proxyActivities } from "@temporalio/workflow";
import type { Activities } from "../activities/index.ts";
import { SLURM_QUICK, SLURM_WAITING } from "./activity-options.ts";

export const slurmQuick = proxyActivities<Activities>(SLURM_QUICK);

export const slurmWaiting = proxyActivities<Activities>(SLURM_WAITING);
