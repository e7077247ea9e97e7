// Training runs (LoRA adapters): start (the data checked first, kept as a file), list, show with
// progress, cancel, and the artifact — raw, or in bounded base64 chunks for ctl. Each run is a job
// row (kind "training") and the workflow training/<id>.
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Router } from "express";
import { WorkflowNotFoundError, type Client } from "@temporalio/client";
import { TypedSearchAttributes } from "@temporalio/common";
import { z } from "zod";
import { config } from "../../common/config.ts";
import type { Job, PrismaClient } from "../../common/db.ts";
import { workflowUiUrl } from "../../common/temporal.ts";
import { fileRelPath } from "../../workflows/job-types.ts";
import { KIND_KEY, MODEL_KEY } from "../../workflows/search-attributes.ts";
import { trainingCancelSignal, trainingProgressQuery, trainingWorkflowId, type TrainingInput } from "../../workflows/training-types.ts";
import { newFileId } from "../jobs/file-store.ts";
import { audit } from "./audit.ts";
import { actorContext } from "./principal.ts";
import { AdminError, check } from "./errors.ts";
import { checkTrainingData } from "./training-data.ts";

const MAX_CHUNK = 1 << 20;

export const startBody = z.object({
  base: z.string().min(1).max(300),
  data: z.string().min(1, "the data is empty"),
  gpuMemoryMiB: z.number().int().min(1).max(1 << 20),
  params: z
    .object({
      rank: z.number().int().min(1).max(1024).optional(),
      epochs: z.number().int().min(1).max(1000).optional(),
      batch_size: z.number().int().min(1).max(4096).optional(),
      learning_rate: z.number().positive().max(1).optional(),
      alpha: z.number().int().min(1).max(4096).optional(),
      max_length: z.number().int().min(16).max(1 << 20).optional(),
      step_ms: z.number().int().min(0).max(60_000).optional(),
    })
    .strict()
    .default({}),
  gguf: z.boolean().default(false),
});
export const chunkQuery = z.object({ offset: z.coerce.number().int().min(0), length: z.coerce.number().int().min(1).max(MAX_CHUNK).default(MAX_CHUNK) });

function view(j: Job) {
  const input = j.input as { base?: string; gpuMemoryMiB?: number; params?: unknown; lines?: number };
  return { id: j.id, base: j.model, state: j.state, progress: j.progress, input, artifactFileId: j.resultId, error: j.error, createdAt: j.createdAt, updatedAt: j.updatedAt };
}

export function trainingRoutes(db: PrismaClient, temporal: Client, taskQueue: string): Router {
  const r = Router();
  const find = async (id: string) => {
    const j = await db.job.findUnique({ where: { id } });
    if (!j || j.kind !== "training") throw new AdminError(404, `no training run '${id}'`, "id");
    return j;
  };
  const artifact = async (id: string) => {
    const j = await find(id);
    const f = j.resultId ? await db.file.findUnique({ where: { id: j.resultId } }) : null;
    if (!f) throw new AdminError(409, `training run '${id}' has no artifact yet (${j.state})`, "id");
    return f;
  };

  r.post("/training", async (req, res) => {
    const body = check(startBody, req.body);
    const data = checkTrainingData(body.data);
    if (!data.ok) throw new AdminError(400, `data line ${data.line}: ${data.reason}`, "data");
    const id = `train-${randomBytes(6).toString("hex")}`;
    const dataFileId = newFileId();
    const rel = fileRelPath(dataFileId);
    const abs = path.join(config().dataDir, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, body.data, { mode: 0o600 });
    await db.file.create({
      data: { id: dataFileId, purpose: "fine-tune", filename: `${id}.ndjson`, bytes: BigInt(Buffer.byteLength(body.data)), sha256: createHash("sha256").update(body.data).digest("hex"), path: rel },
    });
    const input: TrainingInput = { id, base: body.base, dataFileId, gpuMemoryMiB: body.gpuMemoryMiB, params: body.params, gguf: body.gguf, maxAttempts: 3, personId: actorContext.getStore()?.personId ?? null };
    await db.job.create({ data: { id, kind: "training", model: body.base, state: "queued", input: { base: body.base, gpuMemoryMiB: body.gpuMemoryMiB, params: body.params, gguf: body.gguf, dataFileId, lines: data.lines } } });
    const workflowId = trainingWorkflowId(id);
    await temporal.workflow.start("training", {
      workflowId,
      taskQueue,
      args: [input],
      typedSearchAttributes: new TypedSearchAttributes([
        { key: MODEL_KEY, value: body.base },
        { key: KIND_KEY, value: "training" },
      ]),
    });
    await audit(db, { action: "training.start", target: `training/${id}`, after: { base: body.base, gpuMemoryMiB: body.gpuMemoryMiB, params: body.params, lines: data.lines } });
    res.status(202).json({ id, operationId: workflowId, lines: data.lines, uiUrl: workflowUiUrl(workflowId) });
  });

  r.get("/training", async (_req, res) => {
    const rows = await db.job.findMany({ where: { kind: "training" }, orderBy: { createdAt: "desc" }, take: 500 });
    res.json({ data: rows.map(view) });
  });

  r.get("/training/:id", async (req, res) => {
    const j = await find(req.params.id);
    const handle = temporal.workflow.getHandle(trainingWorkflowId(j.id));
    const status = await handle.describe().then((d) => d.status.name, (err) => (err instanceof WorkflowNotFoundError ? null : Promise.reject(err)));
    const live = status === "RUNNING" ? await handle.query(trainingProgressQuery).catch(() => null) : null;
    res.json({ ...view(j), status, live, uiUrl: workflowUiUrl(trainingWorkflowId(j.id)) });
  });

  r.post("/training/:id/cancel", async (req, res) => {
    const j = await find(req.params.id);
    try {
      await temporal.workflow.getHandle(trainingWorkflowId(j.id)).signal(trainingCancelSignal);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw new AdminError(409, `training run '${j.id}' is not running (${j.state})`, "id");
      throw err;
    }
    await audit(db, { action: "training.cancel", target: `training/${j.id}` });
    res.status(202).json({ id: j.id, action: "cancel" });
  });

  /** The artifact's bytes; with ?offset= a bounded chunk as JSON (base64), which is how ctl reads it. */
  r.get("/training/:id/artifact", async (req, res) => {
    const f = await artifact(req.params.id);
    const abs = path.join(config().dataDir, f.path);
    if (req.query.offset === undefined) {
      res.setHeader("content-type", "application/octet-stream");
      res.setHeader("content-length", String(f.bytes));
      res.setHeader("content-disposition", `attachment; filename="${f.filename}"`);
      res.setHeader("x-llmgw-sha256", f.sha256);
      return void fs.createReadStream(abs).pipe(res);
    }
    const q = check(chunkQuery, req.query);
    const total = Number(f.bytes);
    const length = Math.max(0, Math.min(q.length, total - q.offset));
    const buf = Buffer.alloc(length);
    const fd = fs.openSync(abs, "r");
    try {
      fs.readSync(fd, buf, 0, length, q.offset);
    } finally {
      fs.closeSync(fd);
    }
    res.json({ filename: f.filename, total, sha256: f.sha256, offset: q.offset, data: buf.toString("base64") });
  });

  return r;
}
