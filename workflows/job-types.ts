// What a picture, 3D or ComfyUI job carries from the gateway to its workflow and activities.

/** A file the graph reads: uploaded to ComfyUI's input folder, its name put where `placeholder` is. */
export interface JobFileInput {
  placeholder: string;
  fileId: string;
}

export interface JobSpec {
  id: string;
  kind: "image" | "mesh" | "workflow";
  /** The served comfyui model whose replica runs the graph (one job at a time per model). */
  model: string;
  projectId: string | null;
  keyId: string | null;
  /** API-format ComfyUI graph; string values "{{name}}" are placeholders. */
  graph: Record<string, unknown>;
  values: Record<string, string | number | boolean>;
  files: JobFileInput[];
  /** What the result files are, for the licence stamp and the price. */
  output: "image" | "mesh" | "file";
}

export interface JobResult {
  fileIds: string[];
}

/** Job states as clients see them. */
export type JobState = "queued" | "waiting_gpu" | "running" | "completed" | "failed" | "cancelled";

export const jobWorkflowId = (id: string) => `job/${id}`;
export const jobQueueWorkflowId = (model: string) => `job-queue/${model}`;
export const jobsTaskQueue = (base: string) => `${base}-jobs`;

export const GRANTED_SIGNAL = "granted";
export const ENQUEUE_SIGNAL = "enqueue";
export const RELEASE_SIGNAL = "release";

/** Where a stored file lives under the data directory: files/<last two of the id>/<id>. */
export const fileRelPath = (id: string) => `files/${id.slice(-2)}/${id}`;
