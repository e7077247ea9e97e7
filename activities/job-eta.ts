// About how long until the card is free, for a job shown as waiting_gpu: from the holding job's
// own progress (steps done in the time it has run → the time the rest takes), else from how long
// the model's recent jobs ran (their median), less what the holder has run already.
import type { PrismaClient } from "../common/db.ts";

/** How many finished jobs of a model the median is taken over. */
const RECENT = 20;

export interface RunningProgress {
  step?: number;
  steps?: number | null;
  /** When the prompt was first seen running (ms since the epoch). */
  running_since?: number;
}

/** Seconds left from steps done and time spent: elapsed × (steps − step) / step; null before the first step. */
export function remainingFromSteps(p: RunningProgress, now = Date.now()): number | null {
  if (!p.step || !p.steps || p.running_since === undefined || p.step > p.steps) return null;
  const elapsed = Math.max(0, now - p.running_since) / 1000;
  return Math.round((elapsed * (p.steps - p.step)) / p.step);
}

/** The median of the last jobs' run times (progress.run_seconds of completed jobs), or null. */
export async function medianRunSeconds(db: PrismaClient, model: string): Promise<number | null> {
  const rows = await db.job.findMany({ where: { model, state: "completed" }, orderBy: { updatedAt: "desc" }, take: RECENT, select: { progress: true } });
  const secs = rows.map((r) => (r.progress as { run_seconds?: unknown }).run_seconds).filter((s): s is number => typeof s === "number").sort((a, b) => a - b);
  if (!secs.length) return null;
  const mid = secs.length >> 1;
  return secs.length % 2 ? secs[mid]! : (secs[mid - 1]! + secs[mid]!) / 2;
}

/**
 * Seconds until `holder` (a job id, or a prompt ComfyUI runs for someone else) lets the card go,
 * plus `ahead` whole runs of the model queued before the waiting job; null when nothing is known.
 */
export async function etaSeconds(db: PrismaClient, input: { model: string; holder: string | null; ahead?: number; now?: number }): Promise<number | null> {
  const now = input.now ?? Date.now();
  const job = input.holder ? await db.job.findUnique({ where: { id: input.holder }, select: { model: true, progress: true } }) : null;
  const p = (job?.progress ?? {}) as RunningProgress;
  let left = remainingFromSteps(p, now);
  const median = await medianRunSeconds(db, job?.model ?? input.model);
  if (left === null && median !== null) left = Math.max(0, Math.round(median - (p.running_since !== undefined ? (now - p.running_since) / 1000 : 0)));
  if (left === null) return null;
  const ahead = input.ahead ?? 0;
  if (ahead > 0) {
    if (median === null) return null;
    left += Math.round(ahead * median);
  }
  return left;
}
