// Shapes and messages of the training workflow (training/<id>), shared with its activities and
// the admin API. No I/O: the workflow bundle imports it.
import { defineQuery, defineSignal } from "@temporalio/workflow";

export interface TrainingInput {
  id: string;
  base: string;
  /** The checked pairs, kept as a file (purpose "fine-tune"). */
  dataFileId: string;
  gpuMemoryMiB: number;
  params: Record<string, unknown>;
  gguf: boolean;
  /** Attempts, each on another node, when a node is lost mid-run. */
  maxAttempts: number;
  /** Who started it (null: the admin token): its usage rows carry the person. */
  personId?: string | null;
}

export interface TrainingProgress {
  kind: "training";
  phase: "placing" | "running" | "receiving" | "done" | "failed" | "cancelled";
  nodeId: string | null;
  attempt: number;
  step: number;
  steps: number;
  loss: number;
  peakMemoryMiB: number;
  message: string;
  /** What `operation show` prints for every operation. */
  wanted: number;
  ready: number;
}

export const trainingProgressQuery = defineQuery<TrainingProgress>("progress");
export const trainingCancelSignal = defineSignal("cancel");

export const trainingWorkflowId = (id: string) => `training/${id}`;
