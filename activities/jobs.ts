// Activities of picture, 3D and ComfyUI jobs: they speak ComfyUI's own API on the model's replica
// (POST /prompt, GET /history, GET /queue, POST /queue delete, POST /interrupt, /upload/image,
// /view, the /ws progress socket) through the replica's key-checking gate, sending the replica's
// key, and keep the job's row current for clients polling it. At most LLMGW_JOBS_MAX prompts run at
// once in the whole cluster: each holds a lease on a Redis semaphore while on the engine.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { ApplicationFailure, CancelledFailure, Context } from "@temporalio/activity";
import type { Client } from "@temporalio/client";
import { WebSocket } from "undici";
import { config } from "../common/config.ts";
import { engineAuth } from "../common/engine-key.ts";
import { RedisSemaphore } from "../common/redis-semaphore.ts";
import { withAssetExtras, isGlb } from "../common/glb.ts";
import { isPng, replaceText } from "../common/png.ts";
import { costMicros, parsePrices } from "../common/pricing.ts";
import { temporalClient } from "../common/temporal.ts";
import { joinJobLine } from "../common/job-line.ts";
import type { ActivityDeps } from "./deps.ts";
import { etaSeconds } from "./job-eta.ts";
import { recordJobUsage } from "./job-usage.ts";
import { jobWaker } from "./job-wake.ts";
import { fileRelPath, type JobSpec, type JobState } from "../workflows/job-types.ts";

const POLL_MS = 500;
/** A dead worker's slot in the cluster's job limit comes back after this (renewed every poll). */
const SLOT_LEASE_MS = 10_000;
type ComfyOutput = { filename: string; subfolder: string; type: string };
type QueueItem = [number, string, ...unknown[]];
type HistoryMessages = [string, Record<string, unknown>][];

/** When ComfyUI's history says `kind` happened to a prompt (execution_start, execution_success, …), in ms. */
const stampOf = (messages: HistoryMessages | undefined, kind: string): number | undefined => {
  const t = messages?.find(([m]) => m === kind)?.[1].timestamp;
  return typeof t === "number" ? t : undefined;
};
/** A replica's engine: where it is and whose key it asks for. */
interface Engine {
  url: string;
  replicaId: string;
  /** GPUs the replica holds, which the job's run time is charged for (docs/people.md). */
  gpus: number;
}
export interface PromptOutputs extends Engine {
  files: ComfyOutput[];
  /** Seconds the prompt ran on the engine, when this activity saw it start. */
  runSeconds?: number;
}

let temporal: Promise<{ client: Client }> | undefined;

/** Where a stored file is, absolute and relative to the data directory (as File.path keeps it). */
export function filePath(dataDir: string, id: string): { abs: string; rel: string } {
  const rel = fileRelPath(id);
  return { abs: path.join(dataDir, rel), rel };
}

/** Every string "{{name}}" replaced by the value (keeping its type); names inside text as text. */
export function fillGraph(graph: unknown, values: Record<string, string | number | boolean>): unknown {
  if (typeof graph === "string") {
    const whole = /^\{\{([A-Za-z0-9_]+)\}\}$/.exec(graph);
    if (whole && whole[1]! in values) return values[whole[1]!];
    return graph.replace(/\{\{([A-Za-z0-9_]+)\}\}/g, (m, n: string) => (n in values ? String(values[n]) : m));
  }
  if (Array.isArray(graph)) return graph.map((g) => fillGraph(g, values));
  if (graph && typeof graph === "object") return Object.fromEntries(Object.entries(graph).map(([k, v]) => [k, fillGraph(v, values)]));
  return graph;
}

async function getJson<T>(url: string, init?: RequestInit): Promise<T> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) });
  const text = await res.text();
  if (!res.ok) throw Object.assign(new Error(`${init?.method ?? "GET"} ${url}: HTTP ${res.status} ${text.slice(0, 500)}`), { status: res.status, body: text });
  return (text ? JSON.parse(text) : {}) as T;
}

export function jobActivities(deps: ActivityDeps) {
  const auth = (e: Engine) => engineAuth(deps.clusterToken, e.replicaId);
  const comfyGet = <T>(e: Engine, p: string) => getJson<T>(`${e.url}${p}`, { headers: auth(e) });
  const comfyPost = <T>(e: Engine, p: string, body: unknown) =>
    getJson<T>(`${e.url}${p}`, { method: "POST", headers: { "content-type": "application/json", ...auth(e) }, body: JSON.stringify(body) });
  const cancelAt = async (e: Engine, id: string): Promise<void> => {
    const q = await comfyGet<{ queue_running: QueueItem[]; queue_pending: QueueItem[] }>(e, "/queue");
    if (q.queue_pending.some((it) => it[1] === id)) await comfyPost(e, "/queue", { delete: [id] });
    if (q.queue_running.some((it) => it[1] === id)) await comfyPost(e, "/interrupt", { prompt_id: id });
  };
  const slots = () => new RedisSemaphore(deps.redis, `llmgw:job-slots:${config().LLMGW_TASK_QUEUE}`, config().LLMGW_JOBS_MAX, SLOT_LEASE_MS);
  const setJobState = async (input: { id: string; state: JobState; progress: Record<string, unknown>; error?: string; resultId?: string }) => {
    await deps.db.job.update({
      where: { id: input.id },
      data: { state: input.state, progress: input.progress as object, error: input.error ?? null, ...(input.resultId ? { resultId: input.resultId } : {}) },
    });
  };
  const replicas = (model: string) => deps.db.replica.findMany({ where: { modelName: model, state: "ready" }, orderBy: { id: "asc" } });

  /** Where the prompt already is (a retry after a crash), so it is resumed, never submitted twice. */
  async function findPrompt(model: string, id: string): Promise<Engine | null> {
    for (const r of await replicas(model)) {
      const e = { url: r.url, replicaId: r.id, gpus: r.gpus.length };
      try {
        const h = await comfyGet<Record<string, unknown>>(e, `/history/${encodeURIComponent(id)}`);
        const q = await comfyGet<{ queue_running: QueueItem[]; queue_pending: QueueItem[] }>(e, "/queue");
        if (h[id] || [...q.queue_running, ...q.queue_pending].some((it) => it[1] === id)) return e;
      } catch {
        // an unreachable replica holds nothing we can resume
      }
    }
    return null;
  }

  return {
    setJobState,

    /** Joins the model's line (starting its queue workflow if none runs). Idempotent on the job id. */
    async enqueueJob(input: { model: string; jobId: string }): Promise<void> {
      temporal ??= temporalClient();
      const { client } = await temporal;
      await joinJobLine(client, config().LLMGW_TASK_QUEUE, input.model, input.jobId);
    },

    /**
     * Runs the graph to its end, heartbeating; resumes the same prompt when retried. While it waits
     * (no replica, the cluster's job limit, another prompt on the engine) its progress says what
     * holds the card and about how long that takes.
     */
    async runComfyPrompt(spec: JobSpec): Promise<PromptOutputs> {
      const ctx = Context.current();
      const limit = slots();
      let shown = "";
      const show = async (state: JobState, progress: Record<string, unknown>) => {
        const key = JSON.stringify([state, progress]);
        if (key !== shown) await setJobState({ id: spec.id, state, progress });
        shown = key;
      };
      const waker = jobWaker(deps, async () => (await (temporal ??= temporalClient())).client, spec.model);
      let at = await findPrompt(spec.model, spec.id);
      try {
        // A prompt already on the engine (a retry after a crash) counts against the limit whatever it says.
        if (at) await limit.acquire(spec.id, { force: true });
        while (!at) {
          const [r] = await replicas(spec.model);
          await waker.inUse();
          if (!r) await waker.noReplica();
          const slot = r ? await limit.acquire(spec.id) : null;
          if (!r || !slot?.ok) {
            const holders = slot?.holders ?? [];
            const etas = await Promise.all(holders.map(async (h) => ({ h, eta: await etaSeconds(deps.db, { model: spec.model, holder: h }) })));
            const soonest = etas.sort((x, y) => (x.eta ?? Infinity) - (y.eta ?? Infinity))[0];
            await show(
              "waiting_gpu",
              r
                ? { held_by: soonest?.h ?? null, reason: `the cluster runs at most ${limit.cap} job(s) at once`, running: holders.length, eta_seconds: soonest?.eta ?? null }
                : { held_by: `no ready replica of ${spec.model}`, eta_seconds: null },
            );
            ctx.heartbeat();
            await ctx.sleep(POLL_MS * 2);
            continue;
          }
          const e = { url: r.url, replicaId: r.id, gpus: r.gpus.length };
          const values = { ...spec.values };
          for (const f of spec.files) values[f.placeholder] = await upload(e, spec, f.placeholder, f.fileId);
          const graph = fillGraph(spec.graph, values);
          try {
            await comfyPost(e, "/prompt", { prompt: graph, prompt_id: spec.id, client_id: spec.id });
          } catch (err) {
            const x = err as { status?: number; body?: string };
            if (x.status === 400) throw ApplicationFailure.create({ type: "JobFailed", message: `ComfyUI refused the workflow: ${x.body}`, nonRetryable: true });
            throw err;
          }
          at = e;
        }
        return await follow(at);
      } finally {
        await limit.release(spec.id).catch(() => undefined);
      }

      /** Progress comes over the socket; the queue and history are polled too, since a socket can drop. */
      async function follow(at: Engine): Promise<PromptOutputs> {
        let step: { value: number; max: number } | null = null;
        let runningSince: number | undefined;
        const ws = new WebSocket(`${at.url.replace(/^http/, "ws")}/ws?clientId=${encodeURIComponent(spec.id)}`, { headers: auth(at) });
        ws.onmessage = (ev) => {
          try {
            const m = JSON.parse(String(ev.data)) as { type: string; data: { prompt_id?: string; value?: number; max?: number } };
            if (m.type === "progress" && m.data.prompt_id === spec.id) step = { value: m.data.value!, max: m.data.max! };
          } catch {
            // not a JSON message (previews are binary): nothing to read
          }
        };
        ws.onerror = () => undefined;
        try {
          for (;;) {
            ctx.heartbeat(step);
            await waker.inUse();
            await limit.acquire(spec.id, { force: true }); // renews the lease
            const h = await comfyGet<Record<string, { outputs: Record<string, Record<string, ComfyOutput[]>>; status: { status_str: string; messages: [string, Record<string, unknown>][] } }>>(
              at,
              `/history/${encodeURIComponent(spec.id)}`,
            );
            const done = h[spec.id];
            if (done?.status.status_str === "success") {
              const files = Object.values(done.outputs).flatMap((o) => Object.values(o).flat()).filter((f) => f.type === "output");
              // ComfyUI stamps the start and the end in ms; this activity's own sighting otherwise.
              const [from, to] = [stampOf(done.status.messages, "execution_start") ?? runningSince, stampOf(done.status.messages, "execution_success") ?? Date.now()];
              return { ...at, files, ...(from !== undefined ? { runSeconds: Math.max(0, to - from) / 1000 } : {}) };
            }
            if (done) {
              const why = done.status.messages.find(([k]) => k === "execution_error" || k === "execution_interrupted");
              throw ApplicationFailure.create({ type: "JobFailed", message: `ComfyUI: ${why?.[1].exception_message ?? why?.[0] ?? "failed"}`, nonRetryable: true });
            }
            const q = await comfyGet<{ queue_running: QueueItem[]; queue_pending: QueueItem[] }>(at, "/queue");
            const running = q.queue_running.find((it) => it[1] === spec.id);
            if (running) {
              runningSince ??= Date.now();
              const s = step as { value: number; max: number } | null;
              await show("running", s ? { step: s.value, steps: s.max, percent: Math.round((100 * s.value) / s.max), running_since: runningSince } : { step: 0, steps: null, percent: 0, running_since: runningSince });
            } else {
              const ahead = Math.max(0, q.queue_pending.findIndex((it) => it[1] === spec.id));
              const holder = q.queue_running[0]?.[1] ?? null;
              const eta = await etaSeconds(deps.db, { model: spec.model, holder, ahead });
              await show("waiting_gpu", { held_by: holder ? `ComfyUI prompt ${holder}` : "ComfyUI", engine_queue_ahead: ahead, eta_seconds: eta });
            }
            await ctx.sleep(POLL_MS);
          }
        } catch (err) {
          if (err instanceof CancelledFailure) await cancelAt(at, spec.id);
          throw err;
        } finally {
          ws.close();
        }
      }
    },

    /** Out of ComfyUI's queue if waiting there; interrupted if running. */
    async cancelComfyPrompt(input: { model: string; jobId: string }): Promise<void> {
      const at = await findPrompt(input.model, input.jobId);
      if (at) await cancelAt(at, input.jobId);
    },

    /**
     * A failed or cancelled job's GPU time: what its prompt ran on the engine before it stopped (the
     * engine's history stamps its start and its end), on the replica's GPUs, at no money cost. A job
     * that never reached an engine, or whose replica is gone, is charged nothing.
     */
    async chargeUnfinishedJob(input: { spec: JobSpec; status: 499 | 500 }): Promise<{ gpuSeconds: number }> {
      const { spec } = input;
      const at = await findPrompt(spec.model, spec.id);
      if (!at) return { gpuSeconds: 0 };
      type Stamps = Record<string, { status: { messages: HistoryMessages } }>;
      const stamp = (h: Stamps, k: string) => stampOf(h[spec.id]?.status.messages, k);
      // An interrupted prompt is in the history once the engine has stopped it: a moment after the cancel.
      let h: Stamps = {};
      for (let i = 0; i < 20; i++) {
        h = await comfyGet<Stamps>(at, `/history/${encodeURIComponent(spec.id)}`).catch(() => ({}));
        if (h[spec.id]) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      const from = stamp(h, "execution_start");
      const to = stamp(h, "execution_interrupted") ?? stamp(h, "execution_error") ?? stamp(h, "execution_success");
      const gpuSeconds = from !== undefined && to !== undefined ? (at.gpus * Math.max(0, to - from)) / 1000 : 0;
      if (gpuSeconds > 0) await recordJobUsage(deps, spec, { replicaId: at.replicaId, costMicros: 0, gpuSeconds, status: input.status });
      return { gpuSeconds };
    },

    /** Fetches the outputs, strips the workflow, stamps the licence, records the files and the price. */
    async storeJobOutputs(input: { spec: JobSpec; outputs: PromptOutputs }): Promise<{ fileIds: string[] }> {
      const { spec, outputs } = input;
      const { dataDir } = config();
      const model = await deps.db.model.findUnique({ where: { name: spec.model } });
      const licence = model?.licence ?? "unspecified";
      const fileIds: string[] = [];
      for (const [i, out] of outputs.files.entries()) {
        const id = `file-${spec.id}-${i}`;
        fileIds.push(id);
        if (await deps.db.file.findUnique({ where: { id } })) continue;
        const q = new URLSearchParams({ filename: out.filename, subfolder: out.subfolder, type: out.type });
        const res = await fetch(`${outputs.url}/view?${q}`, { headers: auth(outputs), signal: AbortSignal.timeout(60_000) });
        if (!res.ok) throw new Error(`GET /view ${out.filename}: HTTP ${res.status}`);
        let bytes: Buffer = Buffer.from(await res.arrayBuffer());
        if (isPng(bytes)) bytes = replaceText(bytes, { licence, model: spec.model });
        else if (isGlb(bytes)) bytes = withAssetExtras(bytes, { licence, model: spec.model });
        const where = filePath(dataDir, id);
        fs.mkdirSync(path.dirname(where.abs), { recursive: true });
        fs.writeFileSync(`${where.abs}.part`, bytes, { mode: 0o600 });
        fs.renameSync(`${where.abs}.part`, where.abs);
        await deps.db.file.create({
          data: { id, projectId: spec.projectId, purpose: "output", filename: out.filename, bytes: BigInt(bytes.length), sha256: createHash("sha256").update(bytes).digest("hex"), path: where.rel },
        });
      }
      const prices = parsePrices(model?.prices);
      const pictures = spec.output === "image" ? fileIds.length : 0;
      const meshes = spec.output === "mesh" ? fileIds.length : 0;
      // The job's id keys its ledger row, so a retried activity charges once.
      const cost = prices ? costMicros(prices, { promptTokens: 0, cachedTokens: 0, completionTokens: 0, pictures, meshes }) : 0;
      // The engine's whole card(s) for the prompt's run: a ComfyUI replica runs one prompt at a time.
      const gpuSeconds = (outputs.gpus ?? 0) * (outputs.runSeconds ?? 0);
      await recordJobUsage(deps, spec, { replicaId: outputs.replicaId, costMicros: cost, gpuSeconds, status: 200 });
      await setJobState({ id: spec.id, state: "completed", progress: { files: fileIds, percent: 100, ...(outputs.runSeconds !== undefined ? { run_seconds: Math.round(outputs.runSeconds * 10) / 10 } : {}) }, resultId: fileIds[0] });
      return { fileIds };
    },
  };

  /** A job's file put in ComfyUI's input folder; returns the name the graph uses. */
  async function upload(e: Engine, spec: JobSpec, placeholder: string, fileId: string): Promise<string> {
    const f = await deps.db.file.findUnique({ where: { id: fileId } });
    if (!f || f.projectId !== spec.projectId) throw ApplicationFailure.create({ type: "JobFailed", message: `file ${fileId} is gone`, nonRetryable: true });
    const form = new FormData();
    const name = `${spec.id}-${placeholder}${path.extname(f.filename)}`;
    form.set("image", new Blob([fs.readFileSync(path.join(config().dataDir, f.path))]), name);
    form.set("overwrite", "true");
    const res = await fetch(`${e.url}/upload/image`, { method: "POST", body: form, headers: auth(e), signal: AbortSignal.timeout(60_000) });
    if (!res.ok) throw new Error(`upload of ${fileId} to ComfyUI: HTTP ${res.status}`);
    return ((await res.json()) as { name: string }).name;
  }
}
