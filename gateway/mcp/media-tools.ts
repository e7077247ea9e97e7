// llmgw's media and jobs tools: a picture from a prompt, a mesh from a picture, a catalog workflow
// run, a job's status and a file's bytes — what /v1/images, /v1/3d, /v1/workflows/runs and
// /v1/files do, through the same code (gateway/jobs/), under the key's model grants and project.
// The making tools wait for their job, waking a cold on-demand model first, and report its progress
// (queued, waiting for a GPU, steps) as MCP progress notifications; the caller cancelling the call
// cancels the job.
import fs from "node:fs";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Job } from "../../common/db.ts";
import { contentType, ownedFile } from "../jobs/file-store.ts";
import { jobView, ownedJob, type JobsDeps } from "../jobs/service.ts";
import { startMesh, startPictures, startWorkflowRun } from "../jobs/starts.ts";
import type { GuardService } from "../guard/service.ts";
import type { McpCaller } from "./caller-key.ts";
import { jsonResult, ownTool, toolError, type OwnCallContext, type OwnTool } from "./own-tool.ts";

export const MEDIA_SERVER = "llmgw";
const POLL_MS = 500;
/** Files larger than this are named, not sent inline (the answer's bound is 4 MiB as JSON). */
const INLINE_BYTES = 2 * 1024 * 1024;
const SIZE = /^\d{2,4}x\d{2,4}$/;

/** What wakes an on-demand model (gateway/router/wake.ts's Waker). */
export interface ModelWaker {
  touch(model: string): void;
  wakeWithoutWaiting(model: string): void;
}

export interface MediaDeps {
  jobs: JobsDeps;
  guard: GuardService | null;
  waker: ModelWaker | null;
}

/** A person signed in without a project membership has nowhere to keep jobs and files. */
function project(c: McpCaller): string {
  if (!c.projectId) throw Object.assign(new Error("jobs and files belong to a project: you hold no project membership (or use a project's llmgw key)"), { status: 403 });
  return c.projectId;
}

function progressOf(job: Job, ahead: unknown): { progress: number; total?: number; message: string } {
  const p = job.progress as { percent?: number; step?: number; steps?: number | null; held_by?: string; eta_seconds?: number | null };
  const percent = typeof p.percent === "number" ? p.percent : 0;
  const message =
    job.state === "queued"
      ? `queued${typeof ahead === "number" ? `, ${ahead} ahead` : ""}`
      : job.state === "waiting_gpu"
        ? `waiting for a GPU (${p.held_by ?? "the model is starting"})${p.eta_seconds ? `, about ${p.eta_seconds} s` : ""}`
        : job.state === "running"
          ? `running${p.steps ? `: step ${p.step ?? 0} of ${p.steps}` : ""}`
          : job.state;
  return { progress: percent, total: 100, message };
}

/**
 * Waits for the job, telling its progress on each change; cancels it when the caller does. While the
 * job waits for a replica the model is asked to wake again (the Waker sends at most one signal per
 * 10 s): one ask at the start is lost when the gateway's catalog has not yet heard the model is on
 * demand (it re-reads it every few seconds) or the signal fails, and the job would wait for ever.
 * Each poll also counts as use, so the model does not sleep under a long job.
 */
async function awaitJob(deps: MediaDeps, jobId: string, model: string, ctx: OwnCallContext): Promise<Job> {
  let told = "";
  for (;;) {
    if (ctx.signal.aborted) {
      await deps.jobs.temporal.workflow.getHandle(`job/${jobId}`).cancel().catch(() => undefined);
      throw ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error("cancelled");
    }
    const job = await deps.jobs.db.job.findUniqueOrThrow({ where: { id: jobId } });
    if (["completed", "failed", "cancelled"].includes(job.state)) return job;
    deps.waker?.touch(model);
    if (job.state === "waiting_gpu" && /^no ready replica/.test(String((job.progress as { held_by?: unknown }).held_by))) deps.waker?.wakeWithoutWaiting(model);
    if (ctx.onprogress) {
      const view = await jobView(deps.jobs, job, "job");
      const p = progressOf(job, view.progress.queue_ahead);
      const key = `${p.progress}|${p.message}`;
      if (key !== told) ctx.onprogress(p);
      told = key;
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** The finished job's files: pictures inline (while small), every file by id and URL. */
async function filesResult(deps: MediaDeps, job: Job): Promise<CallToolResult> {
  if (job.state !== "completed") return toolError(`job ${job.id} ${job.state}${job.error ? `: ${job.error}` : ""}`);
  const ids = ((job.progress as { files?: string[] }).files ?? []).length ? (job.progress as { files: string[] }).files : job.resultId ? [job.resultId] : [];
  const content: CallToolResult["content"] = [];
  const files = [];
  let inline = 0;
  for (const id of ids) {
    const f = await deps.jobs.db.file.findUniqueOrThrow({ where: { id } });
    const type = contentType(f.filename);
    files.push({ id, filename: f.filename, bytes: Number(f.bytes), content_type: type, url: `/v1/files/${id}/content` });
    if (type.startsWith("image/") && inline + Number(f.bytes) <= INLINE_BYTES) {
      inline += Number(f.bytes);
      content.push({ type: "image", data: fs.readFileSync(path.join(deps.jobs.dataDir, f.path)).toString("base64"), mimeType: type });
    }
  }
  content.unshift({ type: "text", text: JSON.stringify({ job: job.id, files }) });
  return { content, structuredContent: { job: job.id, files } };
}

/** Starts the model waking when it sleeps (on demand); the job then waits for it, saying so. */
function wake(deps: MediaDeps, model: string): void {
  deps.waker?.touch(model);
  deps.waker?.wakeWithoutWaiting(model);
}

const model = z.string().min(1).max(200);
const seed = z.number().int().min(0).max(2 ** 32 - 1).optional();

export function mediaTools(deps: MediaDeps): OwnTool[] {
  const t = (n: string) => `${MEDIA_SERVER}.${n}`;
  const owner = (c: McpCaller) => ({ id: c.id, projectId: project(c), models: c.models });
  return [
    ownTool({
      name: t("images.generate"),
      description: "Makes pictures from a prompt with a ComfyUI model the key may use, waiting for them (the model is woken if it sleeps) and reporting progress. Answers with the pictures and their file ids.",
      input: z.strictObject({ model, prompt: z.string().min(1).max(4000), negative_prompt: z.string().max(4000).default(""), n: z.number().int().min(1).max(4).default(1), size: z.string().regex(SIZE, "WIDTHxHEIGHT, e.g. 1024x1024").default("1024x1024"), seed, steps: z.number().int().min(1).max(150).default(20) }),
      async run(a, ctx) {
        const b = { ...a };
        if (deps.guard) Object.assign(b, deps.guard.checkTexts(ctx.caller, b.model, { prompt: b.prompt, negative_prompt: b.negative_prompt }));
        wake(deps, b.model);
        const { job } = await startPictures(deps.jobs, owner(ctx.caller), b);
        return filesResult(deps, await awaitJob(deps, job.id, b.model, ctx));
      },
    }),
    ownTool({
      name: t("3d.generate"),
      description: "Makes a GLB mesh from a picture (base64, or the id of one of the project's files) with a ComfyUI model, waiting for it and reporting progress. Answers with the mesh's file id (llmgw.files.get reads it).",
      input: z.strictObject({ model, image: z.string().min(1).optional(), file_id: z.string().regex(/^file-[A-Za-z0-9-]+$/).optional(), resolution: z.number().int().min(64).max(2048).multipleOf(32).default(256), seed, steps: z.number().int().min(1).max(1000).default(30) }).refine((a) => (a.image === undefined) !== (a.file_id === undefined), "give exactly one of image (base64) and file_id"),
      async run(a, ctx) {
        wake(deps, a.model);
        const image = a.image === undefined ? undefined : Buffer.from(a.image.replace(/^data:[^;,]+;base64,/, ""), "base64");
        const job = await startMesh(deps.jobs, owner(ctx.caller), { ...a, image, output: "glb" });
        return filesResult(deps, await awaitJob(deps, job.id, a.model, ctx));
      },
    }),
    ownTool({
      name: t("workflows.run"),
      description: "Runs a ComfyUI workflow of the catalog with its declared inputs, waiting for it and reporting progress. Answers with the files it made.",
      input: z.strictObject({ workflow: z.string().min(1).max(200), inputs: z.record(z.string(), z.unknown()).default({}) }),
      async run(a, ctx) {
        const wf = await deps.jobs.db.comfyWorkflow.findUnique({ where: { name: a.workflow }, select: { model: true } });
        if (wf) wake(deps, wf.model);
        const job = await startWorkflowRun(deps.jobs, owner(ctx.caller), { model: a.workflow, inputs: a.inputs });
        return filesResult(deps, await awaitJob(deps, job.id, job.model, ctx));
      },
    }),
    ownTool({
      name: t("jobs.status"),
      description: "A job of the project (picture, mesh or workflow run) by its id: status, progress, result files or error.",
      input: z.strictObject({ id: z.string().min(1).max(100) }),
      run: async (a, ctx) => jsonResult(await jobView(deps.jobs, await ownedJob(deps.jobs, a.id, project(ctx.caller), ["image", "mesh", "workflow"]), "job")),
    }),
    ownTool({
      name: t("files.get"),
      description: "A file of the project by its id: a picture as an image, anything else as a resource (base64), up to 2 MiB.",
      input: z.strictObject({ id: z.string().regex(/^file-[A-Za-z0-9-]+$/) }),
      async run(a, ctx) {
        const f = await ownedFile(deps.jobs.db, a.id, project(ctx.caller));
        if (!f) return toolError(`no file '${a.id}' of your project`);
        if (Number(f.bytes) > INLINE_BYTES) return toolError(`file ${f.id} is ${f.bytes} bytes, more than an answer holds (${INLINE_BYTES}); fetch /v1/files/${f.id}/content with a key`);
        const type = contentType(f.filename);
        const data = fs.readFileSync(path.join(deps.jobs.dataDir, f.path)).toString("base64");
        return { content: [type.startsWith("image/") ? { type: "image", data, mimeType: type } : { type: "resource", resource: { uri: `llmgw://files/${f.id}`, mimeType: type, blob: data } }] };
      },
    }),
  ];
}
