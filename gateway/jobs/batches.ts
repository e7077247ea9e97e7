// Batches (OpenAI's Batch API) as the APIs see them: made (a row, then the workflow batch/<id> on
// the jobs queue), shown in OpenAI's Batch object, listed, cancelled (the row says cancelling, then
// Temporal cancels the run; the lines in flight finish and are kept). The client API scopes them to
// the key's project; the admin API (ctl batches) sees every project's.
import { randomBytes } from "node:crypto";
import path from "node:path";
import { WorkflowNotFoundError } from "@temporalio/client";
import type { Batch, Prisma } from "../../common/db.ts";
import { batchView } from "./batch-view.ts";
import { BatchLineError, readBatchLines } from "../../common/batch-lines.ts";
import { ApiError } from "../errors.ts";
import { ownedFile } from "./file-store.ts";
import type { JobsDeps } from "./service.ts";
import { BATCH_ACTIVE, batchWorkflowId, type BatchSpec } from "../../workflows/batch-types.ts";
import { jobsTaskQueue } from "../../workflows/job-types.ts";

const WINDOW_MS = 24 * 3600_000;

/** What reading and cancelling need (the admin API has no data directory to hand). */
export type BatchDeps = Pick<JobsDeps, "db" | "temporal">;

export { batchView };

const bad = (message: string, param: string, code: string | null = null) => new ApiError("invalid_request", message, { param, code });

/** Makes the batch and starts its workflow; every line must call the batch's endpoint. */
export async function createBatch(deps: JobsDeps, key: { id: string; projectId: string }, want: { inputFileId: string; endpoint: string; metadata: Record<string, string> | null }): Promise<Batch> {
  const file = await ownedFile(deps.db, want.inputFileId, key.projectId);
  if (!file) throw new ApiError("not_found", `no file '${want.inputFileId}'`, { param: "input_file_id", code: "file_not_found" });
  if (file.purpose !== "batch") throw bad(`file '${file.id}' was uploaded with purpose '${file.purpose}'; a batch's input needs purpose 'batch'`, "input_file_id", "invalid_file_purpose");
  let total = 0;
  try {
    for await (const l of readBatchLines(path.join(deps.dataDir, file.path))) {
      if (l.url !== want.endpoint) throw new BatchLineError(l.line, `url '${l.url}' differs from the batch's endpoint '${want.endpoint}'`, "url");
      total++;
    }
  } catch (err) {
    if (err instanceof BatchLineError) throw bad(`the batch file is not valid: ${err.message}`, "input_file_id", "invalid_batch_file");
    throw err;
  }
  const id = `batch_${randomBytes(12).toString("hex")}`;
  const now = new Date();
  const batch = await deps.db.batch.create({
    data: { id, projectId: key.projectId, keyId: key.id, endpoint: want.endpoint, inputFileId: file.id, total, metadata: want.metadata ?? undefined, createdAt: now, expiresAt: new Date(now.getTime() + WINDOW_MS) },
  });
  const spec: BatchSpec = { id, expiresAtMs: batch.expiresAt.getTime() };
  try {
    await deps.temporal.workflow.start("batchRun", { workflowId: batchWorkflowId(id), taskQueue: jobsTaskQueue(deps.taskQueue), args: [spec], memo: { project: key.projectId, endpoint: want.endpoint, total } });
  } catch (err) {
    await deps.db.batch.update({ where: { id }, data: { status: "failed", failedAt: new Date(), errors: [{ code: "not_started", message: "the batch's workflow could not be started", param: null, line: null }] } });
    throw err;
  }
  return batch;
}

/** The batch, or a 404; with `projectId` another project's batch is as good as absent. */
export async function findBatch(deps: BatchDeps, id: string, projectId: string | null): Promise<Batch> {
  const b = await deps.db.batch.findUnique({ where: { id } });
  if (!b || (projectId !== null && b.projectId !== projectId)) throw new ApiError("not_found", `no batch '${id}'`, { param: "batch_id", code: "batch_not_found" });
  return b;
}

/** Newest first, OpenAI's cursor paging: `after` is the last id of the page before. */
export async function listBatches(deps: BatchDeps, projectId: string | null, query: { after?: string; limit: number }) {
  const { limit } = query;
  const where: Prisma.BatchWhereInput = projectId === null ? {} : { projectId };
  if (query.after !== undefined) {
    const at = await deps.db.batch.findUnique({ where: { id: query.after } });
    // A cursor naming no batch of the caller's (deleted, expired, another project's) ends the list.
    if (!at || (projectId !== null && at.projectId !== projectId)) return { object: "list", data: [], first_id: null, last_id: null, has_more: false };
    where.OR = [{ createdAt: { lt: at.createdAt } }, { createdAt: at.createdAt, id: { lt: at.id } }];
  }
  const rows = await deps.db.batch.findMany({ where, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: limit + 1 });
  const page = rows.slice(0, limit);
  return { object: "list", data: page.map(batchView), first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: rows.length > limit };
}

/** Cancels a running batch (again is a no-op); a finished one cannot be. */
export async function cancelBatch(deps: BatchDeps, b: Batch): Promise<Batch> {
  if (b.status === "cancelling" || b.status === "cancelled") return b;
  if (!BATCH_ACTIVE.includes(b.status)) throw bad(`batch '${b.id}' is ${b.status}; only a running batch can be cancelled`, "batch_id", "batch_not_cancellable");
  const moved = await deps.db.batch.updateMany({ where: { id: b.id, status: { in: ["validating", "in_progress"] } }, data: { status: "cancelling", cancellingAt: new Date() } });
  if (moved.count) {
    try {
      await deps.temporal.workflow.getHandle(batchWorkflowId(b.id)).cancel();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
  }
  return deps.db.batch.findUniqueOrThrow({ where: { id: b.id } });
}
