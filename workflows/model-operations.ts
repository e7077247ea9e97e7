// What each kind of operation of model/<name> runs, one function per kind; the entity's main loop
// (model-entity.ts) takes them off its queue one at a time and records how they ended.
//
// The run* functions are generators, not async functions: each yields the promise it waits on, and
// the main loop awaits it itself. An async function in between would add a microtask between a
// child's result and the loop's next command, and a run begun before the patch
// handlers-before-operations replays by that order (tests/unit/model-entity-replay.test.ts).
import { executeChild, sleep } from "@temporalio/workflow";
import { assertNever } from "../common/assert-never.ts";
import { canary } from "./canary.ts";
import { evacuateNode } from "./evacuate-node.ts";
import type { ModelState, OperationRecord } from "./model-types.ts";
import { noteServed, runOnDemand } from "./on-demand.ts";
import { publishAdapter } from "./publish-adapter.ts";
import { rollingUpgrade } from "./rolling-upgrade.ts";
import { operationSearchAttributes } from "./search-attributes.ts";
import { serveModel } from "./serve.ts";

/** The promises an operation waits on, in turn; the driver sends each one's value back in. */
export type OperationSteps = Generator<Promise<unknown>, void, unknown>;

type Operation<K extends OperationRecord["kind"]> = Extract<OperationRecord, { kind: K }>;

/** Waits between repairs grow: 2 s, 4 s, 8 s … up to a minute. */
const repairBackoffMs = (failed: number) => Math.min(60_000, 2_000 * 2 ** failed);

/** The steps of `op`; a kind added to OperationRecord does not compile until it is handled here. */
export function runOperation(state: ModelState, op: OperationRecord): OperationSteps {
  switch (op.kind) {
    case "serve":
      return runServe(state, op);
    case "upgrade":
      return runUpgrade(state, op);
    case "evacuate":
      return runEvacuate(state, op);
    case "canary":
      return runCanary(state, op);
    case "publish":
      return runPublish(state, op);
    case "wake":
    case "sleep":
      return runWakeOrSleep(state, op);
    default:
      return assertNever(op, "operation kind");
  }
}

/** A yielded promise's value, typed: the driver sends back what the promise it was handed resolved to. */
function* valueOf<T>(promise: Promise<T>): Generator<Promise<T>, T, unknown> {
  return (yield promise) as T;
}

function* runServe(state: ModelState, op: Operation<"serve">): OperationSteps {
  if (op.repair) {
    if (state.failedRepairs) yield sleep(repairBackoffMs(state.failedRepairs));
    // Repair toward what is wanted now, not when the replica died (an upgrade may have run since).
    if (state.desired) op.command = { ...state.desired };
  }
  yield executeChild(serveModel, {
    workflowId: op.id,
    args: [{ model: state.name, ...op.command }],
    typedSearchAttributes: operationSearchAttributes(state.name, "serve"),
    memo: { summary: `serve ${state.name} ${op.command.version} on ${op.command.engine} ×${op.command.replicas}` },
  });
  state.desired = op.command;
  noteServed(state);
}

function* runUpgrade(state: ModelState, op: Operation<"upgrade">): OperationSteps {
  const c = op.command;
  const { replicas } = yield* valueOf(
    executeChild(rollingUpgrade, {
      workflowId: op.id,
      args: [{ model: state.name, ...c, replicas: state.desired?.replicas }],
      typedSearchAttributes: operationSearchAttributes(state.name, "upgrade"),
      memo: { summary: `upgrade ${state.name} to ${c.version} on ${c.engine}, ${c.wave} per wave` },
    }),
  );
  state.desired = { version: c.version, engine: c.engine, args: c.args, contextLength: c.contextLength, replicas };
}

function* runEvacuate(state: ModelState, op: Operation<"evacuate">): OperationSteps {
  yield executeChild(evacuateNode, {
    workflowId: op.id,
    args: [{ model: state.name, nodeId: op.command.nodeId }],
    typedSearchAttributes: operationSearchAttributes(state.name, "evacuate", op.command.nodeId),
    memo: { summary: `move ${state.name}'s replicas off ${op.command.nodeId}` },
  });
}

function* runCanary(state: ModelState, op: Operation<"canary">): OperationSteps {
  const c = op.command;
  op.decision = yield* valueOf(
    executeChild(canary, {
      workflowId: op.id,
      args: [{ model: state.name, ...c, serving: state.desired?.replicas ?? 1 }],
      typedSearchAttributes: operationSearchAttributes(state.name, "canary"),
      memo: { summary: `canary ${state.name} ${c.version} at ${c.weight}% for ${Math.round(c.durationMs / 1000)} s` },
    }),
  );
  if (op.decision.decision === "promoted") {
    state.desired = { version: c.version, engine: c.engine, args: c.args, contextLength: c.contextLength, replicas: state.desired?.replicas ?? 1 };
  }
}

function* runPublish(state: ModelState, op: Operation<"publish">): OperationSteps {
  yield executeChild(publishAdapter, {
    workflowId: op.id,
    args: [{ model: state.name, ...op.command }],
    typedSearchAttributes: operationSearchAttributes(state.name, "publish"),
    memo: { summary: `publish LoRA adapter ${op.command.name} to ${state.name}, one replica at a time` },
  });
}

function* runWakeOrSleep(state: ModelState, op: Operation<"wake" | "sleep">): OperationSteps {
  yield runOnDemand(state, op);
}
