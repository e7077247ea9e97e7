// Drain: a replica leaves service at the node. It is reported DRAINING (never READY) from then on,
// and the call waits, reading the engine's own metrics as the router does, until no request is
// running or waiting there, or the grace is over. The mark lasts until the replica is stopped.
import { z } from "zod";
import type { ReplicaStatus } from "../common/proto.ts";
import { parseEngineLoad } from "../gateway/router/engine-metrics.ts";
import { ENGINES } from "./engines/registry.ts";

const POLL_MS = 200;
const DEFAULT_GRACE_MS = 30_000;
const MAX_GRACE_MS = 10 * 60_000;

export const drainRequestSchema = z.object({
  replicaId: z.string().min(1, "replica_id is required"),
  graceMs: z.number().int().min(0).max(MAX_GRACE_MS, `grace_ms is at most ${MAX_GRACE_MS}`),
});

/** Requests running plus waiting on the engine, from its metrics; null when it reports none. */
export async function engineInFlight(url: string, engine: string, headers: Record<string, string>, signal?: AbortSignal): Promise<number | null> {
  const metricsPath = Object.hasOwn(ENGINES, engine) ? ENGINES[engine]!.metricsPath : "/metrics";
  if (!metricsPath) return null;
  try {
    const res = await fetch(`${url}${metricsPath}`, { headers, signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(2000)]) : AbortSignal.timeout(2000) });
    if (!res.ok) return null;
    const load = parseEngineLoad(await res.text());
    return load && load.running + load.waiting;
  } catch {
    return null;
  }
}

export class Drains {
  private readonly marked = new Set<string>();

  /** `auth`: the headers a replica's engine demands (its key; llama-server keys /metrics too). */
  constructor(private readonly auth: (replicaId: string) => Record<string, string>) {}

  /** Replicas as the control plane should see them: a drained one that still runs is DRAINING. */
  overlay(list: ReplicaStatus[]): ReplicaStatus[] {
    return list.map((r) => (this.marked.has(r.replicaId ?? "") && r.state !== "REPLICA_STATE_EXITED" ? { ...r, state: "REPLICA_STATE_DRAINING" } : r));
  }

  /** The replica is stopped (or gone): its mark goes with it. */
  forget(id: string): void {
    this.marked.delete(id);
  }

  /**
   * Marks `replica` draining and waits for its engine to go idle. Returns the requests still in
   * flight at the end (-1: the engine reports no load, so there was nothing to wait on).
   */
  async drain(replica: ReplicaStatus | undefined, graceMs: number, signal?: AbortSignal): Promise<{ inFlight: number; waitedMs: number }> {
    const started = Date.now();
    if (!replica || replica.state === "REPLICA_STATE_EXITED") return { inFlight: 0, waitedMs: 0 };
    this.marked.add(replica.replicaId!);
    const until = started + (graceMs || DEFAULT_GRACE_MS);
    for (;;) {
      const n = await engineInFlight(replica.url!, replica.engine!, this.auth(replica.replicaId!), signal);
      if (n === null) return { inFlight: -1, waitedMs: Date.now() - started };
      if (n === 0 || Date.now() >= until || signal?.aborted) return { inFlight: n, waitedMs: Date.now() - started };
      await new Promise((r) => setTimeout(r, Math.min(POLL_MS, Math.max(0, until - Date.now()))));
    }
  }
}
