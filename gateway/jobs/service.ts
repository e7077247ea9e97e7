// Jobs as the client API sees them: made (a row, then the workflow job/<id> on the jobs queue),
// shown (state, where it is, the result), cancelled (Temporal cancellation; the workflow takes the
// prompt out of ComfyUI's queue or interrupts it).
import { randomBytes } from "node:crypto";
import { WorkflowNotFoundError, type Client } from "@temporalio/client";
import type { Job, PrismaClient } from "../../common/db.ts";
import { joinJobLine } from "../../common/job-line.ts";
import { log } from "../../common/logging.ts";
import { ApiError } from "../errors.ts";
import { jobWorkflowId, jobsTaskQueue, type JobResult, type JobSpec } from "../../workflows/job-types.ts";

export interface JobsDeps {
  db: PrismaClient;
  temporal: Client;
  dataDir: string;
  /** LLMGW_TASK_QUEUE; jobs run on `<it>-jobs`. */
  taskQueue: string;
}

const ACTIVE = ["queued", "waiting_gpu", "running"];

/**
 * The request as the job's record keeps it: PostgreSQL's jsonb cannot hold U+0000, which a prompt
 * may, so it is kept as U+FFFD there; the workflow gets the text as it came.
 */
function storable(v: unknown): unknown {
  if (typeof v === "string") return v.replaceAll("\u0000", "\uFFFD");
  if (Array.isArray(v)) return v.map(storable);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [storable(k) as string, storable(x)]));
  return v;
}

/** The served engine model behind a job must be a ComfyUI model of the catalog. */
export async function comfyModel(db: PrismaClient, name: unknown): Promise<string> {
  if (typeof name !== "string" || !name) throw new ApiError("invalid_request", "model: required", { param: "model" });
  const v = await db.modelVersion.findFirst({ where: { modelName: name, engine: "comfyui" } });
  if (!v) throw new ApiError("not_found", `model '${name}' is not a ComfyUI model of the catalog`, { param: "model", code: "model_not_found" });
  return name;
}

export async function startJob(deps: JobsDeps, spec: Omit<JobSpec, "id">, input: Record<string, unknown>): Promise<{ job: Job; result: () => Promise<JobResult>; cancel: () => Promise<void> }> {
  const id = `job-${randomBytes(12).toString("hex")}`;
  const job = await deps.db.job.create({ data: { id, kind: spec.kind, model: spec.model, projectId: spec.projectId, input: storable(input) as object } });
  const handle = await deps.temporal.workflow.start("comfyJob", {
    workflowId: jobWorkflowId(id),
    taskQueue: jobsTaskQueue(deps.taskQueue),
    args: [{ ...spec, id }],
    memo: { kind: spec.kind },
  });
  // In line now, in the order jobs were accepted (the workflow's own enqueue activity may run later
  // than another job's). If this fails, that activity still puts the job in line.
  await joinJobLine(deps.temporal, deps.taskQueue, spec.model, id).catch((err: unknown) => log.warn("job not put in line yet; its workflow will", { job: id, error: (err as Error).message }));
  return { job, result: () => handle.result() as Promise<JobResult>, cancel: async () => void (await handle.cancel()) };
}

/** The project's job or a 404 (another project's job is as good as absent). */
export async function ownedJob(deps: JobsDeps, id: string, projectId: string, kinds: string[]): Promise<Job> {
  const j = await deps.db.job.findUnique({ where: { id } });
  if (!j || j.projectId !== projectId || !kinds.includes(j.kind)) throw new ApiError("not_found", `no job '${id}'`, { param: "id", code: "job_not_found" });
  return j;
}

export async function cancelJob(deps: JobsDeps, job: Job): Promise<void> {
  if (!ACTIVE.includes(job.state)) return;
  try {
    await deps.temporal.workflow.getHandle(jobWorkflowId(job.id)).cancel();
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
}

/** The job as clients read it; a queued job says how many are ahead of it on the model's card. */
export async function jobView(deps: JobsDeps, job: Job, object: string) {
  const progress = { ...(job.progress as Record<string, unknown>) };
  if (job.state === "queued") {
    progress.queue_ahead = await deps.db.job.count({
      where: { model: job.model, state: { in: ACTIVE }, OR: [{ createdAt: { lt: job.createdAt } }, { createdAt: job.createdAt, id: { lt: job.id } }] },
    });
  }
  const files = (progress.files as string[] | undefined) ?? [];
  delete progress.files;
  return {
    id: job.id,
    object,
    model: job.model,
    status: job.state,
    progress,
    result: job.state === "completed" ? { file_id: job.resultId, files: files.map((id) => ({ id, url: `/v1/files/${id}/content` })) } : null,
    error: job.error ? { message: job.error } : null,
    created_at: Math.floor(job.createdAt.getTime() / 1000),
    updated_at: Math.floor(job.updatedAt.getTime() / 1000),
  };
}
