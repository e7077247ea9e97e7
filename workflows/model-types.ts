// Shapes shared by the model workflows, the activities and the admin API. Types only: a workflow
// bundle must not pull in code with I/O.
import type { OnDemandState, SleepCommand, WakeCommand } from "./on-demand-types.ts";

/** What an operator asks a model to serve. */
export interface ServeCommand {
  version: string;
  engine: string;
  args: string[];
  replicas: number;
  contextLength?: number;
}

export interface ServeInput extends ServeCommand {
  model: string;
}

/** A rolling upgrade to another version (or the same version with other engine arguments). */
export interface UpgradeCommand {
  version: string;
  engine: string;
  args: string[];
  contextLength?: number;
  /** Replicas replaced per wave. */
  wave: number;
}

export interface UpgradeInput extends UpgradeCommand {
  model: string;
  /** How many replicas to serve throughout; the live count when the model has no desired state. */
  replicas?: number;
}

/** A replica as the workflows see it. */
export interface ReplicaRef {
  id: string;
  model: string;
  version: string;
  nodeId: string;
  url: string;
}

export type OperationPhase =
  | "queued"
  | "placing"
  | "fetching"
  | "starting"
  | "waiting-ready"
  | "smoke-test"
  | "draining"
  | "stopping"
  | "paused"
  | "rolling-back"
  | "done"
  | "failed"
  | "loading";

/** Progress of one operation, answered by its workflow's `progress` query. */
export interface OperationProgress {
  kind: string;
  phase: OperationPhase;
  wanted: number;
  ready: number;
  message: string;
  replicas: ReplicaRef[];
  /** Weights being fetched, by node: bytes held of total and the current rate (bytes/s). */
  fetch?: Record<string, FetchProgressReport>;
  /** Rolling upgrades: waves finished of all. */
  waves?: { done: number; total: number };
  /** Canaries: the figures of each window and, at the end, the decision. */
  canary?: { windows: CanaryWindow[]; decision: CanaryDecision | null };
}

/** A fetch's progress on one node, as the fetch activity signals it to its workflow. */
export interface FetchProgressReport {
  nodeId: string;
  bytes: number;
  total: number;
  bytesPerSecond: number;
  done: boolean;
}

/** One operation in a model's log, kept by the entity workflow. */
/** A share of traffic to a new version, judged against the stable one over windows. */
export interface CanaryCommand {
  version: string;
  engine: string;
  args: string[];
  contextLength?: number;
  /** Percent of requests the canary gets. */
  weight: number;
  durationMs: number;
  windowMs: number;
  maxErrorRate: number;
  /** The canary's median latency may be at most this many times the stable version's. */
  maxLatencyRatio: number;
  /** Requests a window needs on the canary before it is judged. */
  minRequests: number;
  replicas: number;
  /** Replicas replaced per wave when promoted. */
  wave: number;
}

export interface CanaryWindow {
  at: number;
  stable: { requests: number; errorRate: number; p50Ms: number | null };
  canary: { requests: number; errorRate: number; p50Ms: number | null };
  verdict: "ok" | "too-few" | "errors" | "latency";
}

export interface CanaryDecision {
  decision: "promoted" | "rolled-back";
  reason: string;
  windows: CanaryWindow[];
}

/** Move a model's replicas off a node (drained or lost) onto others. */
export interface EvacuateCommand {
  nodeId: string;
}

export type OperationRecord = (
  | { kind: "serve"; command: ServeCommand; repair?: boolean }
  | { kind: "upgrade"; command: UpgradeCommand }
  | { kind: "evacuate"; command: EvacuateCommand }
  | { kind: "canary"; command: CanaryCommand; decision?: CanaryDecision }
  | { kind: "wake"; command: WakeCommand }
  | { kind: "sleep"; command: SleepCommand }
  | { kind: "publish"; command: PublishCommand }
) & {
  id: string;
  state: "queued" | "running" | "completed" | "failed";
  error?: string;
};

/** The entity workflow's state, answered by its `state` query and carried across continue-as-new. */
export interface ModelState {
  name: string;
  desired: ServeCommand | null;
  seq: number;
  operations: OperationRecord[];
  /** Replacements of dead replicas that failed in a row; past a limit the model is parked. */
  failedRepairs?: number;
  /** Why the model stopped repairing itself; a serve command clears it. */
  parked?: string | null;
  /** Sleeping, waking or serving, and since when; set by every serve, wake and sleep. */
  onDemand?: OnDemandState;
  /** The idle watch runs: set by a wake or a settings change, cleared once the model is not on demand. */
  idleWatch?: boolean;
}

/** A model's entity workflow as its first command starts it. */
export const newModelState = (name: string): ModelState => ({ name, desired: null, seq: 0, operations: [] });

export const modelWorkflowId = (name: string) => `model/${name}`;
/** A LoRA adapter (a ModelAdapter row) loaded onto the model's replicas, one at a time. */
export interface PublishCommand {
  adapterId: string;
  name: string;
}

export interface PublishInput extends PublishCommand {
  model: string;
}

export const operationWorkflowId = (name: string, kind: string, seq: number) => `model/${name}/${kind}/${seq}`;
