// Shapes and messages of the Slurm lend and reclaim workflows, shared with the activities and the
// admin API. No I/O here: the workflow bundle imports it.
import { defineQuery } from "@temporalio/workflow";

export interface SlurmJobView {
  id: string;
  name: string;
  state: string;
  user: string;
}

/** What Slurm says of a node. */
export interface SlurmView {
  available: boolean;
  state: string;
  reason: string;
  drained: boolean;
  drainedByLlmgw: boolean;
  jobs: SlurmJobView[];
  error: string;
}

export interface LendInput {
  nodeId: string;
  /** Stop replicas that have no room elsewhere instead of refusing. */
  force: boolean;
}

export interface ReclaimInput {
  nodeId: string;
  /** After this long, jobs still running are requeued; null waits for them however long. */
  deadlineMs: number | null;
}

export type SlurmPhase =
  | "cordoning"
  | "moving-replicas"
  | "waiting-replicas-gone"
  | "resuming"
  | "waiting-slurm-idle"
  | "draining"
  | "waiting-jobs"
  | "requeueing"
  | "returning"
  | "done"
  | "failed";

/** Answered by the `progress` query (the same name every operation answers, so `operation show` reads it). */
export interface SlurmProgress {
  kind: "slurm-lend" | "slurm-reclaim";
  nodeId: string;
  phase: SlurmPhase;
  message: string;
  /** Fields `operation show` prints for every operation. */
  wanted: number;
  ready: number;
  slurm: SlurmView | null;
}

export const slurmProgressQuery = defineQuery<SlurmProgress>("progress");

export const slurmWorkflowId = (nodeId: string) => `node/${nodeId}/slurm`;
