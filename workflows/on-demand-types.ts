// On-demand models (catalog min_replicas 0): shapes shared by the entity workflow, its activities,
// the gateway and the admin API. Types and constants only: the workflow bundle imports this.

/** sleeping: no replicas, the next request wakes it; waking: replicas starting; serving: up. */
export type OnDemandPhase = "sleeping" | "waking" | "serving";

/** Kept in the entity's state (so `ctl model show` can say it). */
export interface OnDemandState {
  phase: OnDemandPhase;
  /** Workflow time the phase began (ms since the epoch). */
  since: number;
  /** Wakes so far. */
  wakes: number;
}

/** A gateway's ask: a request is waiting for the model. */
export interface WakeCommand {
  reason: string;
}

/** Stop the replicas of a model idle this long (re-checked before stopping). */
export interface SleepCommand {
  idleMs: number;
  idleAfterMs: number;
}

/** What the idle check found: whether the model is on demand, how long it has been idle, the limit. */
export interface IdleCheck {
  onDemand: boolean;
  idleMs: number;
  idleAfterMs: number;
}

/** The Redis key where gateways note a model's last request (ms since the epoch). */
export const lastRequestKey = (model: string) => `llmgw:last-request:${model}`;
