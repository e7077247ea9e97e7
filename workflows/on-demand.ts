// On-demand models inside the entity workflow model/<name>: a gateway's wake signal queues a wake
// (one at a time, however many gateways ask), and an idle watch queues a sleep once no request has
// come for the model's idle_after (read live at every check, so `ctl model set` needs no restart).
// Wake and sleep run as serve children like any other operation, so they never fight another one.
import { condition, executeChild, patched, proxyActivities, setHandler, sleep } from "@temporalio/workflow";
import type { Activities } from "../activities/index.ts";
import { ON_DEMAND } from "./activity-options.ts";
import { settled } from "./handlers-first.ts";
import { settingsSignal, wakeSignal } from "./messages.ts";
import type { ModelState, OperationRecord, ServeCommand } from "./model-types.ts";
import type { OnDemandPhase, SleepCommand, WakeCommand } from "./on-demand-types.ts";
import { operationSearchAttributes } from "./search-attributes.ts";
import { serveModel } from "./serve.ts";
import type { SignalDecisions } from "./signal-decisions.ts";

const act = proxyActivities<Activities>(ON_DEMAND);

/** Checks at least this far apart, however short idle_after is. */
const MIN_CHECK_MS = 500;
/** Checks at most this far apart, so a shorter idle_after set live applies soon. */
const MAX_CHECK_MS = 15_000;
/** Before idle-watch-on-signal: a model not on demand was looked at again this often. */
const NOT_ON_DEMAND_CHECK_MS = 60_000;

type OnDemandOperation = Extract<OperationRecord, { kind: "wake" | "sleep" }>;
type Enqueue = (op: { kind: "wake"; command: WakeCommand } | { kind: "sleep"; command: SleepCommand }) => unknown;

function setPhase(state: ModelState, phase: OnDemandPhase, woke = false): void {
  state.onDemand = { phase, since: Date.now(), wakes: (state.onDemand?.wakes ?? 0) + (woke ? 1 : 0) };
}

/** After any serve: with replicas the model is serving, without it sleeps until a request wakes it. */
export function noteServed(state: ModelState): void {
  setPhase(state, (state.desired?.replicas ?? 0) > 0 ? "serving" : "sleeping");
}

const asleep = (state: ModelState) => state.onDemand?.phase === "sleeping";
const awake = (state: ModelState) => (state.desired?.replicas ?? 0) > 0 && !asleep(state);

/**
 * Installs the wake signal and starts the idle watch; called once at the workflow's start.
 * `handlersFirst`: the entity's patch handlers-before-operations (model-entity.ts) is on; the wake
 * decides when `decisions` says (signal-decisions.ts).
 */
export function installOnDemand(state: ModelState, pending: OperationRecord[], enqueue: Enqueue, handlersFirst: boolean, decisions: SignalDecisions): void {
  setHandler(settingsSignal, () => void (state.idleWatch = true));
  setHandler(wakeSignal, (command) =>
    decisions.decide(() => {
      state.idleWatch = true;
      // One wake at a time; a model already up (and not about to sleep) has nothing to wake.
      if (pending.some((o) => o.kind === "wake")) return;
      if (awake(state) && !pending.some((o) => o.kind === "sleep")) return;
      enqueue({ kind: "wake", command });
      setPhase(state, "waking");
    }),
  );
  // Histories written before the idle watch existed replay without it.
  if (patched("on-demand-idle-watch")) void idleWatch(state, pending, enqueue, handlersFirst);
}

/**
 * Watches only a model known to be on demand (a wake or a settings change said so), so the
 * entity workflow of an always-on model polls nothing and its history does not grow.
 */
async function idleWatch(state: ModelState, pending: OperationRecord[], enqueue: Enqueue, handlersFirst: boolean): Promise<void> {
  // Histories from before the watch waited for a signal polled every model once a minute.
  const onSignal = patched("idle-watch-on-signal");
  const due = () => (!onSignal || state.idleWatch === true) && awake(state) && pending.length === 0;
  for (;;) {
    // As the main loop: an update in the same task may queue an operation, so the watch looks
    // again once the task's handlers have ended.
    await settled(due, handlersFirst);
    const check = await act.idleCheck({ model: state.name, awakeSince: state.onDemand?.since ?? 0 });
    if (!check.onDemand) {
      if (onSignal) state.idleWatch = false;
      else await sleep(NOT_ON_DEMAND_CHECK_MS);
      continue;
    }
    if (check.idleMs >= check.idleAfterMs && awake(state) && pending.length === 0) {
      enqueue({ kind: "sleep", command: { idleMs: check.idleMs, idleAfterMs: check.idleAfterMs } });
      await condition(() => !pending.some((o) => o.kind === "sleep"));
      continue;
    }
    // A quarter of the limit (at most 15 s), or sooner when the limit falls due sooner.
    await sleep(Math.max(MIN_CHECK_MS, Math.min(MAX_CHECK_MS, check.idleAfterMs / 4, check.idleAfterMs - check.idleMs)));
  }
}

/** Runs a queued wake or sleep as a serve child; the entity's main loop calls it. */
export async function runOnDemand(state: ModelState, op: OnDemandOperation): Promise<void> {
  if (op.kind === "wake") {
    setPhase(state, "waking", true);
    try {
      // What was served before (an upgrade may have changed it), else the catalog's newest version.
      const base: ServeCommand = state.desired ?? (await act.wakeCommand({ model: state.name }));
      const command = { ...base, replicas: Math.max(1, base.replicas) };
      await serveChild(state, op.id, command, `wake ${state.name}: ${command.version} on ${command.engine} ×${command.replicas}`);
      state.desired = command;
      setPhase(state, "serving");
    } catch (err) {
      setPhase(state, "sleeping");
      throw err;
    }
    return;
  }
  // A request may have come since the sleep was queued.
  const check = await act.idleCheck({ model: state.name, awakeSince: state.onDemand?.since ?? 0 });
  if (!check.onDemand || check.idleMs < check.idleAfterMs || !state.desired) return;
  await serveChild(state, op.id, { ...state.desired, replicas: 0 }, `sleep ${state.name}: idle ${Math.round(check.idleMs / 1000)} s`);
  // desired keeps its replicas: the next wake serves as many again.
  setPhase(state, "sleeping");
}

function serveChild(state: ModelState, workflowId: string, command: ServeCommand, summary: string): Promise<unknown> {
  return executeChild(serveModel, {
    workflowId,
    args: [{ model: state.name, ...command }],
    typedSearchAttributes: operationSearchAttributes(state.name, "serve"),
    memo: { summary },
  });
}
