// The fleet and a model's needs as placement sees them, read from the store: nodes with their
// GPUs (from the agents' inventory) and the GPUs replicas already hold; the model's profile.
import type { PrismaClient } from "../common/db.ts";
import type { FleetNode, Requirement } from "./placement-plan.ts";

/** The client or a transaction of it: placement reads inside its own transaction. */
type Store = Pick<PrismaClient, "node" | "model" | "modelVersion">;
import { memory as memorySchema, profile as profileSchema } from "../common/catalog.ts";
import { memoryNeed, type MemoryNeed } from "./memory-need.ts";

interface InventoryGpu {
  index?: number;
  memoryTotalMib?: number;
  memoryUsedMib?: number;
  computeCapability?: string;
}

export async function fleetView(deps: { db: Store; nodeFreshMs: number }, model: string): Promise<FleetNode[]> {
  const nodes = await deps.db.node.findMany({ include: { replicas: { select: { modelName: true, gpus: true } } } });
  const now = Date.now();
  return nodes.map((n) => {
    const inv = (n.inventory ?? {}) as { gpus?: InventoryGpu[] };
    return {
      id: n.id,
      cordoned: n.cordoned,
      fresh: now - n.lastSeen.getTime() < deps.nodeFreshMs,
      labels: (n.labels ?? {}) as Record<string, string>,
      gpus: (inv.gpus ?? []).map((g) => ({
        index: g.index ?? 0,
        memoryTotalMiB: Number(g.memoryTotalMib ?? 0),
        memoryUsedMiB: Number(g.memoryUsedMib ?? 0),
        computeCapability: Number(g.computeCapability ?? 0),
      })),
      busyGpus: n.replicas.flatMap((r) => r.gpus),
      modelReplicas: n.replicas.filter((r) => r.modelName === model).length,
      totalReplicas: n.replicas.length,
    };
  });
}

/**
 * What one replica of the model needs, from its first profile (CPU-only when it has none) and the
 * version's size and shape: the weights plus the KV cache of its context. `version` "" means the
 * newest version.
 */
export async function requirementFor(deps: { db: Store }, model: string, version: string, count: number, avoid: string[]): Promise<Requirement & { memory: MemoryNeed }> {
  const row = await deps.db.model.findUnique({ where: { name: model } });
  const profiles = profileSchema.array().safeParse(row?.profiles ?? []);
  const p = profiles.success ? profiles.data[0] : undefined;
  const v = await deps.db.modelVersion.findFirst({ where: { modelName: model, ...(version ? { version } : {}) }, orderBy: { createdAt: "desc" } });
  const shape = memorySchema.safeParse(v?.memory ?? undefined);
  const gpusPerReplica = p?.gpu ? Math.max(1, p.gpus_per_replica) : 0;
  const need = memoryNeed(shape.success ? shape.data : undefined, v?.contextLength ?? 0, gpusPerReplica, p?.gpu?.min_memory_gb ?? 0);
  return {
    count,
    gpusPerReplica,
    minComputeCapability: p?.gpu?.min_compute_capability ?? 0,
    memoryPerGpuMiB: need.perGpuMiB,
    labels: p?.labels ?? {},
    avoid,
    memory: need,
  };
}
