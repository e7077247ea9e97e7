// Weights onto a replica's node before its engine starts, through the agent's Fetch (resumable,
// checked by sha256, pickle refused unless the catalog allows it, one download per file however many
// replicas ask). The fetch activity heartbeats every progress message, so its heartbeat timeout
// bounds a stalled download while a large one may take as long as it moves.
import { ApplicationFailure, Context, heartbeat } from "@temporalio/activity";
import * as grpc from "@grpc/grpc-js";
import { config } from "../common/config.ts";
import { fetchProgressSignal } from "../workflows/messages.ts";
import type { FetchProgressReport } from "../workflows/model-types.ts";
import { agentAt, type ActivityDeps } from "./deps.ts";

/** What the agent is asked to fetch. */
export interface WeightsFetch {
  source: string;
  sha256: string;
  allowPickle: boolean;
}

/** A version's weights: a fetch to run on the node, or what the engine loads as it is. */
export interface WeightsPlan {
  fetch: WeightsFetch | null;
  /** Without a fetch: the hub id the engine fetches itself, or "" (the engine's default). */
  weights: string;
  /** The fetch's heartbeat timeout: no progress this long fails the attempt. */
  stallMs: number;
}

type CatalogSource = { url?: string; set?: string; path?: string; hub?: string; sha256?: string };

/** A mirror set as the agent names it: a directory URL ending in "/" or a manifest.json. */
function setSource(set: string): string {
  if (set.endsWith("manifest.json") || set.endsWith("/")) return set;
  return /^https?:\/\//i.test(set) ? `${set}/` : `${set}/manifest.json`;
}

export function planFor(source: CatalogSource, allowPickle: boolean, stallMs: number): WeightsPlan {
  const sha256 = source.sha256 ?? "";
  if (source.url) return { fetch: { source: source.url, sha256, allowPickle }, weights: "", stallMs };
  if (source.set) return { fetch: { source: setSource(source.set), sha256, allowPickle }, weights: "", stallMs };
  // A local path is checked at the node (it exists, no pickle) and used in place.
  if (source.path) return { fetch: { source: source.path, sha256: "", allowPickle }, weights: "", stallMs };
  return { fetch: null, weights: source.hub ?? "", stallMs };
}

/** The agent's refusals that a retry cannot change. */
const FINAL: ReadonlyMap<number, string> = new Map([
  [grpc.status.DATA_LOSS, "ChecksumMismatch"],
  [grpc.status.FAILED_PRECONDITION, "FetchRefused"],
  [grpc.status.INVALID_ARGUMENT, "FetchRefused"],
  [grpc.status.NOT_FOUND, "WeightsNotFound"],
  [grpc.status.PERMISSION_DENIED, "FetchRefused"],
]);

/** Progress reaches the workflow's progress query at most this often (each is a history event). */
const SIGNAL_EVERY_MS = 1000;

export function fetchActivities(deps: ActivityDeps) {
  return {
    /** What a version's replicas load, and how long a fetch may go without progress. */
    async weightsPlan(input: { versionId: string }): Promise<WeightsPlan> {
      const v = await deps.db.modelVersion.findUnique({ where: { id: input.versionId }, select: { source: true, model: { select: { allowPickle: true } } } });
      return planFor((v?.source ?? {}) as CatalogSource, v?.model.allowPickle ?? false, config().LLMGW_FETCH_STALL_MS);
    },

    /**
     * Fetches onto the replica's node; returns the local path the engine loads. Every progress
     * message is a heartbeat (bytes, total, rate); with `report`, the workflow also hears of it.
     */
    async fetchWeights(input: { replicaId: string; nodeId: string; fetch: WeightsFetch; report?: boolean }): Promise<{ path: string; bytes: number }> {
      const node = await deps.db.node.findUnique({ where: { id: input.nodeId } });
      if (!node) throw ApplicationFailure.nonRetryable(`node ${input.nodeId} is not registered`, "UnknownNode");
      const ctx = Context.current();
      const wf = ctx.info.workflowExecution;
      let lastSignal = 0;
      const tell = (p: FetchProgressReport) => {
        if (!input.report || !wf) return;
        const now = Date.now();
        if (!p.done && now - lastSignal < SIGNAL_EVERY_MS) return;
        lastSignal = now;
        // Progress is for people to read: a lost signal costs nothing.
        ctx.client.workflow.getHandle(wf.workflowId, wf.runId).signal(fetchProgressSignal, p).catch(() => undefined);
      };
      // No progress for the heartbeat timeout: Temporal fails this attempt, and this call ends too,
      // so a retry joins the node's download (it goes on there) instead of a second stream here.
      const stall = ctx.info.heartbeatTimeoutMs || config().LLMGW_FETCH_STALL_MS;
      const ac = new AbortController();
      let idle: NodeJS.Timeout | undefined;
      const arm = () => {
        clearTimeout(idle);
        idle = setTimeout(() => ac.abort(), stall);
      };
      const onCancel = () => ac.abort();
      ctx.cancellationSignal.addEventListener("abort", onCancel, { once: true });
      arm();
      try {
        const last = await agentAt(deps, node).fetch(
          { source: input.fetch.source, sha256: input.fetch.sha256, allowPickle: input.fetch.allowPickle },
          (p) => {
            arm();
            heartbeat({ bytes: p.bytes, total: p.total, bytesPerSecond: p.bytesPerSecond });
            tell({ nodeId: input.nodeId, bytes: p.bytes, total: p.total, bytesPerSecond: p.bytesPerSecond, done: p.done });
          },
          // The stall, not a deadline, bounds the call: a large download takes what it takes.
          { timeoutMs: 7 * 24 * 3600_000, signal: ac.signal },
        );
        return { path: last.path, bytes: last.bytes };
      } catch (err) {
        const e = err as { code?: number; details?: string; message?: string };
        const type = e.code === undefined ? undefined : FINAL.get(e.code);
        const message = e.details || e.message || String(err);
        if (type) throw ApplicationFailure.nonRetryable(message, type);
        if (ac.signal.aborted && !ctx.cancellationSignal.aborted) throw ApplicationFailure.retryable(`no fetch progress for ${stall} ms`, "FetchStalled");
        throw err;
      } finally {
        clearTimeout(idle);
        ctx.cancellationSignal.removeEventListener("abort", onCancel);
      }
    },
  };
}
