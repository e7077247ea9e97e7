// Activity proxies of the Slurm workflows: quick calls, and waits that heartbeat. The waits retry
// without a limit of attempts, so an agent or a worker restarted mid-way is waited for, not failed.
import { proxyActivities } from "@temporalio/workflow";
import type { Activities } from "../activities/index.ts";

export const slurmQuick = proxyActivities<Activities>({
  startToCloseTimeout: "45 seconds",
  retry: { initialInterval: "500 ms", maximumInterval: "10 seconds", maximumAttempts: 10 },
});

export const slurmWaiting = proxyActivities<Activities>({
  startToCloseTimeout: "7 days",
  heartbeatTimeout: "10 seconds",
  retry: { initialInterval: "1 second", maximumInterval: "15 seconds" },
});
