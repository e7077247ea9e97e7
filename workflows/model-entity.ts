// model/<name>: one long-lived workflow per model holding its desired state. Commands arrive as
// updates and run one at a time as child workflows, so two operations never fight over a model.
import { allHandlersFinished, ApplicationFailure, condition, continueAsNew, patched, setHandler, workflowInfo } from "@temporalio/workflow";
import { settled } from "./handlers-first.ts";
import { SignalDecisions } from "./signal-decisions.ts";
import { canaryUpdate, evacuateSignal, publishUpdate, repairSignal, serveUpdate, stateQuery, upgradeUpdate } from "./messages.ts";
import { runOperation } from "./model-operations.ts";
import { operationWorkflowId, type ModelState, type OperationRecord } from "./model-types.ts";
import { installOnDemand } from "./on-demand.ts";
import { quick } from "./replica-steps.ts";

/** Finished operations kept in the state (and so in the `state` query); older ones live in Temporal's history. */
const KEEP_OPERATIONS = 50;
/** Continue-as-new well before Temporal's own suggestion, so histories stay short and fast to replay. */
const HISTORY_LIMIT = 2000;
const MAX_PENDING = 10;
/** Repairs that fail in a row before the model is parked (it stops replacing dead replicas). */
const MAX_FAILED_REPAIRS = 3;

type NewOperation = OperationRecord extends infer O ? (O extends OperationRecord ? Omit<O, "id" | "state"> : never) : never;

export async function modelEntity(initial: ModelState): Promise<void> {
  const state = initial;
  const pending = state.operations.filter((o) => o.state === "queued" || o.state === "running");

  const enqueue = (op: NewOperation) => {
    state.seq += 1;
    const rec = { ...op, id: operationWorkflowId(state.name, op.kind, state.seq), state: "queued" } as OperationRecord;
    state.operations.push(rec);
    pending.push(rec);
    return { operationId: rec.id };
  };
  const unpark = () => {
    state.parked = null;
    state.failedRepairs = 0;
  };
  const roomInQueue = () => {
    if (pending.length >= MAX_PENDING) throw ApplicationFailure.nonRetryable(`model ${state.name} already has ${pending.length} operations waiting; try later`);
  };

  const decisions = new SignalDecisions();

  setHandler(stateQuery, () => state);
  setHandler(evacuateSignal, (command) =>
    decisions.decide(() => {
      if (!pending.some((o) => o.kind === "evacuate" && o.command.nodeId === command.nodeId && o.state === "queued")) enqueue({ kind: "evacuate", command });
    }),
  );
  // A dead replica: serve the desired state again, unless parked, asleep or a repair is already queued.
  setHandler(repairSignal, () =>
    decisions.decide(() => {
      if (!state.desired || state.parked || state.onDemand?.phase === "sleeping" || pending.some((o) => o.state === "queued" && o.kind === "serve")) return;
      enqueue({ kind: "serve", command: { ...state.desired }, repair: true });
    }),
  );
  setHandler(serveUpdate, (command) => {
    // An operator's serve is a fresh start: it unparks the model. With the patch on, when it runs
    // (a failed repair's result may be applied on either side of this handler: signal-decisions.ts).
    if (!decisions.deferred) unpark();
    return enqueue({ kind: "serve", command });
  }, {
    validator: (cmd) => {
      if (!Number.isInteger(cmd.replicas) || cmd.replicas < 0) throw ApplicationFailure.nonRetryable("replicas must be a whole number ≥ 0");
      roomInQueue();
    },
  });
  setHandler(canaryUpdate, (command) => enqueue({ kind: "canary", command }), {
    validator: (cmd) => {
      if (!(cmd.weight > 0 && cmd.weight < 100)) throw ApplicationFailure.nonRetryable("weight must be between 0 and 100 (percent)");
      if (!state.desired || state.desired.replicas === 0) throw ApplicationFailure.nonRetryable(`model ${state.name} is not being served: serve it first`);
      roomInQueue();
    },
  });
  setHandler(upgradeUpdate, (command) => enqueue({ kind: "upgrade", command }), {
    validator: (cmd) => {
      if (!Number.isInteger(cmd.wave) || cmd.wave < 1) throw ApplicationFailure.nonRetryable("wave must be a whole number ≥ 1");
      roomInQueue();
    },
  });
  setHandler(publishUpdate, (command) => enqueue({ kind: "publish", command }), { validator: (_cmd) => roomInQueue() });

  // Every handler of a task ends before the next operation (or the idle watch's check) starts, so an
  // update's answer always comes before the child it queued. A signal and an update that arrive in
  // one workflow task are not handed to the workflow in the same order on replay as live: without
  // this wait the child started after the update's completion live and before it on replay, and a
  // restarted worker found the workflow nondeterministic (tests/integration/serve-durability.test.ts).
  // Runs begun before this change keep their order until they continue as new
  // (tests/unit/model-entity-replay.test.ts).
  const handlersFirst = patched("handlers-before-operations");
  installOnDemand(state, pending, enqueue, handlersFirst, decisions);
  decisions.deferred = patched("signal-decisions-after-results");

  for (;;) {
    decisions.loopWaits = true;
    await settled(() => pending.length > 0 || tooLong(), handlersFirst);
    decisions.loopWaits = false;
    if (pending.length === 0) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof modelEntity>(compact(state));
    }
    const op = pending[0]!;
    op.state = "running";
    if (op.kind === "serve" && !op.repair && decisions.deferred) unpark();
    try {
      // Each step's promise is awaited here, in the loop itself (model-operations.ts says why).
      const steps = runOperation(state, op);
      for (let step = steps.next(); !step.done; step = steps.next(await step.value));
      op.state = "completed";
      if (op.kind === "serve" && op.repair) state.failedRepairs = 0;
    } catch (err) {
      op.state = "failed";
      op.error = failureMessage(err);
      if (op.kind === "serve" && op.repair) {
        state.failedRepairs = (state.failedRepairs ?? 0) + 1;
        if (state.failedRepairs >= MAX_FAILED_REPAIRS) {
          state.parked = `parked after ${state.failedRepairs} failed repairs; last: ${op.error}`;
          // Runs that parked before this patch replay as they ran, without the activity.
          if (patched("notify-parked")) {
            await quick.raiseNotification({
              kind: "model_parked",
              subject: state.name,
              summary: `model ${state.name} is parked: its dead replicas are no longer replaced until an operator serves it (${state.parked})`,
              details: { model: state.name, failedRepairs: state.failedRepairs, lastError: op.error },
            });
          }
        }
      }
    }
    pending.shift();
  }
}

function tooLong(): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || info.historyLength > HISTORY_LIMIT;
}

function compact(state: ModelState): ModelState {
  const open = state.operations.filter((o) => o.state === "queued" || o.state === "running");
  const done = state.operations.filter((o) => o.state === "completed" || o.state === "failed").slice(-KEEP_OPERATIONS);
  return { ...state, operations: [...done, ...open] };
}

/** The innermost message: a child's failure wraps its activity's, which wraps the real cause. */
function failureMessage(err: unknown): string {
  let e: unknown = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}
