// Shapes shared by the model workflows, the activities and the admin API. Types only: a workflow
// bundle must not pull in code with I/O.

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

/** A replica as the workflows see it. */
export interface ReplicaRef {
  id: string;
  model: string;
  version: string;
  nodeId: string;
  url: string;
}

export type OperationPhase = "queued" | "placing" | "starting" | "waiting-ready" | "smoke-test" | "stopping" | "done" | "failed";

/** Progress of one operation, answered by its workflow's `progress` query. */
export interface OperationProgress {
  kind: string;
  phase: OperationPhase;
  wanted: number;
  ready: number;
  message: string;
  replicas: ReplicaRef[];
}

/** One operation in a model's log, kept by the entity workflow. */
export interface OperationRecord {
  id: string;
  kind: "serve";
  command: ServeCommand;
  state: "queued" | "running" | "completed" | "failed";
  error?: string;
}

/** The entity workflow's state, answered by its `state` query and carried across continue-as-new. */
export interface ModelState {
  name: string;
  desired: ServeCommand | null;
  seq: number;
  operations: OperationRecord[];
}

export const modelWorkflowId = (name: string) => `model/${name}`;
export const operationWorkflowId = (name: string, kind: string, seq: number) => `model/${name}/${kind}/${seq}`;
