// Workflow code changes must replay the histories of runs begun before them: a worker upgraded under
// running model workflows replays each from its start. Histories saved from earlier releases
// (tests/fixtures/histories) are replayed with today's workflows.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { test } from "node:test";
import proto from "@temporalio/proto";
import { Worker } from "@temporalio/worker";

const fixture = (name: string) => proto.temporal.api.history.v1.History.decode(readFileSync(new URL(`../fixtures/histories/${name}`, import.meta.url)));
const workflowsPath = fileURLToPath(new URL("../../workflows/index.ts", import.meta.url));

test("a model workflow from before handlers-before-operations, with a signal and an update in one task, replays", async () => {
  // Rejects (DeterminismViolationError) if the workflow now orders that task's commands otherwise.
  await Worker.runReplayHistory({ workflowsPath }, fixture("model-entity-signal-then-update.pb"), "model/replay-ccc7d3");
});
