// A job's ledger row and its budget counters: one row per job, keyed by the job's id, so a retried
// activity writes it once, and the counters add what the row says once (common/job-spend.ts). A
// finished job is priced (pictures, meshes) and charged its prompt's run on the replica's GPUs; a
// failed or cancelled one is charged the GPU time its prompt ran before it stopped, at no money cost.
import { addJobSpend } from "../common/job-spend.ts";
import type { JobSpec } from "../workflows/job-types.ts";
import type { ActivityDeps } from "./deps.ts";

export interface JobUsage {
  replicaId: string | null;
  costMicros: number;
  gpuSeconds: number;
  /** 200: finished; 499: cancelled (as a request its client left); 500: failed. */
  status: 200 | 499 | 500;
}

const ENDPOINTS: Record<JobSpec["kind"], string> = { image: "/v1/images/generations", mesh: "/v1/3d/generations", workflow: "/v1/workflows/runs" };

export async function recordJobUsage(deps: Pick<ActivityDeps, "db" | "redis">, spec: JobSpec, u: JobUsage): Promise<void> {
  const id = `job-${spec.id}`;
  const job = await deps.db.job.findUnique({ where: { id: spec.id }, select: { createdAt: true } });
  const owner = spec.keyId ? await deps.db.apiKey.findUnique({ where: { id: spec.keyId }, select: { personId: true } }) : null;
  await deps.db.usageEvent.createMany({
    data: [
      {
        id,
        at: new Date(),
        keyId: spec.keyId,
        projectId: spec.projectId,
        model: spec.model,
        replicaId: u.replicaId,
        endpoint: ENDPOINTS[spec.kind],
        costMicros: BigInt(u.costMicros),
        latencyMs: job ? Date.now() - job.createdAt.getTime() : 0,
        status: u.status,
        personId: owner?.personId ?? null,
        gpuSeconds: u.gpuSeconds,
      },
    ],
    skipDuplicates: true,
  });
  // Budgets count the row as written (an earlier attempt's, if it wrote it), once.
  if (spec.keyId) {
    const row = await deps.db.usageEvent.findUniqueOrThrow({ where: { id }, select: { costMicros: true, gpuSeconds: true, at: true } });
    await addJobSpend(deps.db, deps.redis, spec.id, spec.keyId, { costMicros: Number(row.costMicros), gpuSeconds: row.gpuSeconds }, row.at.getTime());
  }
}
