// Makes sure the one fleet/watch workflow runs: started by every worker at start, and a no-op
// when it already runs.
import { WorkflowExecutionAlreadyStartedError } from "@temporalio/client";
import { config } from "../common/config.ts";
import { temporalClient } from "../common/temporal.ts";
import { operationSearchAttributes } from "../workflows/search-attributes.ts";

/** One per task queue, so test platforms sharing a namespace each get their own. */
export const fleetWatchId = (taskQueue: string) => (taskQueue === "llmgw" ? "fleet/watch" : `fleet/watch/${taskQueue}`);

export async function ensureFleetWatch(): Promise<void> {
  const c = config();
  const t = await temporalClient();
  try {
    await t.client.workflow.start("fleetWatch", {
      workflowId: fleetWatchId(c.LLMGW_TASK_QUEUE),
      taskQueue: c.LLMGW_TASK_QUEUE,
      args: [{ everyMs: c.LLMGW_FLEET_WATCH_MS, lostMs: c.LLMGW_NODE_LOST_MS, lost: [] }],
      workflowIdConflictPolicy: "USE_EXISTING",
      typedSearchAttributes: operationSearchAttributes(null, "fleet-watch"),
      memo: { summary: "watches nodes and engines; moves replicas off lost nodes, replaces dead ones" },
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  } finally {
    await t.close();
  }
}
