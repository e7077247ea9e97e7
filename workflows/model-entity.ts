// model/<name>: one long-lived workflow per model holding its desired state. Commands arrive as
// updates and run one at a time as child workflows, so two operations never fight over a model.
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  executeChild,
  setHandler,
  workflowInfo,
} from "@temporalio/workflow";
import { serveModel } from "./serve.ts";
import { serveUpdate, stateQuery, upgradeUpdate } from "./messages.ts";
import { operationWorkflowId, type ModelState, type OperationRecord } from "./model-types.ts";
import { rollingUpgrade } from "./rolling-upgrade.ts";
import { operationSearchAttributes } from "./search-attributes.ts";

/** Finished operations kept in the state (and so in the `state` query); older ones live in Temporal's history. */
const KEEP_OPERATIONS = 50;
/** Continue-as-new well before Temporal's own suggestion, so histories stay short and fast to replay. */
const HISTORY_LIMIT = 2000;
const MAX_PENDING = 10;

export async function modelEntity(initial: ModelState): Promise<void> {
  const state = initial;
  const pending = state.operations.filter((o) => o.state === "queued" || o.state === "running");

  const enqueue = (op: Omit<OperationRecord, "id" | "state">) => {
    state.seq += 1;
    const rec = { ...op, id: operationWorkflowId(state.name, op.kind, state.seq), state: "queued" } as OperationRecord;
    state.operations.push(rec);
    pending.push(rec);
    return { operationId: rec.id };
  };
  const roomInQueue = () => {
    if (pending.length >= MAX_PENDING) throw ApplicationFailure.nonRetryable(`model ${state.name} already has ${pending.length} operations waiting; try later`);
  };

  setHandler(stateQuery, () => state);
  setHandler(serveUpdate, (command) => enqueue({ kind: "serve", command }), {
    validator: (cmd) => {
      if (!Number.isInteger(cmd.replicas) || cmd.replicas < 0) throw ApplicationFailure.nonRetryable("replicas must be a whole number ≥ 0");
      roomInQueue();
    },
  });
  setHandler(upgradeUpdate, (command) => enqueue({ kind: "upgrade", command }), {
    validator: (cmd) => {
      if (!Number.isInteger(cmd.wave) || cmd.wave < 1) throw ApplicationFailure.nonRetryable("wave must be a whole number ≥ 1");
      roomInQueue();
    },
  });

  for (;;) {
    await condition(() => pending.length > 0 || tooLong());
    if (pending.length === 0) {
      await condition(allHandlersFinished);
      return continueAsNew<typeof modelEntity>(compact(state));
    }
    const op = pending[0]!;
    op.state = "running";
    try {
      if (op.kind === "serve") {
        await executeChild(serveModel, {
          workflowId: op.id,
          args: [{ model: state.name, ...op.command }],
          typedSearchAttributes: operationSearchAttributes(state.name, "serve"),
          memo: { summary: `serve ${state.name} ${op.command.version} on ${op.command.engine} ×${op.command.replicas}` },
        });
        state.desired = op.command;
      } else {
        const c = op.command;
        const { replicas } = await executeChild(rollingUpgrade, {
          workflowId: op.id,
          args: [{ model: state.name, ...c, replicas: state.desired?.replicas }],
          typedSearchAttributes: operationSearchAttributes(state.name, "upgrade"),
          memo: { summary: `upgrade ${state.name} to ${c.version} on ${c.engine}, ${c.wave} per wave` },
        });
        state.desired = { version: c.version, engine: c.engine, args: c.args, contextLength: c.contextLength, replicas };
      }
      op.state = "completed";
    } catch (err) {
      op.state = "failed";
      op.error = failureMessage(err);
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
