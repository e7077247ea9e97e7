// Activities of a /v1/batches batch. Each line is POSTed to the gateway's own client port with the
// batch's credential (common/batch-credential.ts), which the gateway takes as the key that made the
// batch, in the batch band: so a line meets the same allowlist, limits, admission, routing,
// guardrails and usage rows as the key's own calls, with no second copy of that pipeline here.
// A line's answer is kept as it finishes (one row per custom_id, written once, the batch's counts
// moved in the same transaction), so a run resumed on another worker skips what is done.
import path from "node:path";
import { ApplicationFailure, CancelledFailure, Context } from "@temporalio/activity";
import { batchCredential } from "../common/batch-credential.ts";
import { readBatchLines, type BatchLine } from "../common/batch-lines.ts";
import { config } from "../common/config.ts";
import { log } from "../common/logging.ts";
import { lineRequestId, writeBatchFiles } from "./batch-files.ts";
import type { ActivityDeps } from "./deps.ts";
import type { BatchEnding, BatchProgress } from "../workflows/batch-types.ts";

/** Answers worth waiting out: limits, a full queue, a gateway or engine away for a moment. */
const RETRIED = new Set([429, 502, 503, 504]);
const HEARTBEAT_MS = 1_000;

function gatewayUrl(): string {
  const c = config();
  return c.LLMGW_GATEWAY_URL ?? `http://127.0.0.1:${c.LLMGW_CLIENT_PORT}`;
}

export function batchActivities(deps: ActivityDeps) {
  const { db } = deps;

  const inputPath = async (batchId: string) => {
    const b = await db.batch.findUniqueOrThrow({ where: { id: batchId } });
    const f = await db.file.findUnique({ where: { id: b.inputFileId } });
    if (!f || f.projectId !== b.projectId) throw ApplicationFailure.create({ type: "BatchFailed", message: `the input file ${b.inputFileId} was deleted`, nonRetryable: true });
    return { batch: b, file: path.join(config().dataDir, f.path) };
  };

  /** Keeps a line's answer once; the batch's counts move only when this was the first. */
  const keep = async (batchId: string, line: BatchLine, statusCode: number, body: string, requestId: string | null) => {
    await db.$transaction(async (tx) => {
      const made = await tx.batchResult.createMany({ data: [{ id: `${batchId}/${line.customId}`, batchId, customId: line.customId, line: line.line, statusCode, body, requestId }], skipDuplicates: true });
      if (made.count) await tx.batch.update({ where: { id: batchId }, data: statusCode >= 200 && statusCode < 300 ? { completed: { increment: 1 } } : { failed: { increment: 1 } } });
    });
  };

  return {
    /** validating → in_progress (a batch cancelled before it began stays cancelling). */
    async batchBegin({ id }: { id: string }): Promise<void> {
      await inputPath(id);
      await db.batch.updateMany({ where: { id, status: "validating" }, data: { status: "in_progress", inProgressAt: new Date() } });
    },

    /** Runs every line without a kept answer, at most LLMGW_BATCH_CONCURRENCY at once. */
    async batchRunLines({ id }: { id: string }): Promise<BatchProgress> {
      const ctx = Context.current();
      const { batch, file } = await inputPath(id);
      const done = new Set((await db.batchResult.findMany({ where: { batchId: id }, select: { customId: true } })).map((r) => r.customId));
      const credential = batchCredential(deps.clusterToken, id);
      const base = gatewayUrl();
      const concurrency = config().LLMGW_BATCH_CONCURRENCY;
      let stopped = false;
      const stop = new AbortController();
      ctx.cancelled.catch(() => {
        stopped = true;
        stop.abort();
      });
      const progress = async (): Promise<BatchProgress> => {
        const b = await db.batch.findUniqueOrThrow({ where: { id }, select: { total: true, completed: true, failed: true } });
        return b;
      };
      const beat = setInterval(() => void progress().then((p) => ctx.heartbeat(p), () => ctx.heartbeat()), HEARTBEAT_MS);
      ctx.heartbeat({ total: batch.total, completed: batch.completed, failed: batch.failed });

      const runLine = async (line: BatchLine) => {
        const requestId = lineRequestId(id, line.customId);
        for (let attempt = 0; ; attempt++) {
          let status: number;
          let text: string;
          let retryAfterS = 0;
          try {
            // Not tied to `stop`: a line in flight when the batch is cancelled finishes and is kept.
            const res = await fetch(`${base}${line.url}`, {
              method: "POST",
              headers: { authorization: `Bearer ${credential}`, "content-type": "application/json", "x-request-id": requestId },
              body: JSON.stringify(line.body),
            });
            status = res.status;
            text = await res.text();
            retryAfterS = Number(res.headers.get("retry-after") ?? 0) || 0;
          } catch (err) {
            // The gateway is away (restarting): the line never reached it, so it is sent again.
            status = 0;
            text = (err as Error).message;
          }
          if (status !== 0 && !RETRIED.has(status)) return keep(id, line, status, asJson(text), requestId);
          if (stopped) return; // not kept: it is cancelled or expired with the rest
          const waitMs = Math.min(30_000, Math.max(retryAfterS * 1000, 500 * 2 ** Math.min(attempt, 6)));
          if (attempt % 10 === 9) log.warn("batch line still waiting", { batch: id, customId: line.customId, status, attempts: attempt + 1 });
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, waitMs);
            stop.signal.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
          });
        }
      };

      const inFlight = new Set<Promise<void>>();
      let failure: unknown = null;
      try {
        for await (const line of readBatchLines(file)) {
          if (stopped || failure) break;
          if (done.has(line.customId)) continue;
          while (inFlight.size >= concurrency) await Promise.race(inFlight);
          if (stopped || failure) break;
          const p: Promise<void> = runLine(line)
            .catch((err: unknown) => void (failure ??= err))
            .finally(() => inFlight.delete(p));
          inFlight.add(p);
        }
        await Promise.all(inFlight);
      } finally {
        clearInterval(beat);
      }
      if (failure) throw failure;
      if (stopped) throw new CancelledFailure("the batch was cancelled or expired; the lines in flight finished and were kept");
      return progress();
    },

    /** Writes the output and error files and gives the batch its final status. */
    async batchFinish({ id, ending, error }: { id: string; ending: BatchEnding; error?: string }): Promise<void> {
      const batch = await db.batch.findUniqueOrThrow({ where: { id } });
      if (["completed", "failed", "expired", "cancelled"].includes(batch.status)) return; // finished on an earlier try
      // A cancelled batch stays `cancelling` until its files are written, as OpenAI's does.
      if (ending !== "cancelled") await db.batch.update({ where: { id }, data: { status: "finalizing", finalizingAt: batch.finalizingAt ?? new Date() } });
      let file: string | null = null;
      try {
        file = (await inputPath(id)).file;
      } catch {
        // the input is gone: only what was kept is written
      }
      const files = await writeBatchFiles(deps, batch, file, ending);
      const at = new Date();
      const stamp = { completed: { completedAt: at }, failed: { failedAt: at }, expired: { expiredAt: at }, cancelled: { cancelledAt: at } }[ending];
      await db.batch.update({
        where: { id },
        data: { status: ending, ...stamp, outputFileId: files.outputFileId, errorFileId: files.errorFileId, ...(error ? { errors: [{ code: "batch_failed", message: error, param: null, line: null }] } : {}) },
      });
    },
  };
}

/** The body as JSON text: the gateway answers JSON; anything else is wrapped as an error. */
function asJson(text: string): string {
  try {
    JSON.parse(text);
    return text;
  } catch {
    return JSON.stringify({ error: { message: text.slice(0, 2000), type: "server_error" } });
  }
}
