// Placement as a pure function, tested on tables of fleets: which nodes (and GPUs) take a model's
// new replicas, or — when nothing fits — which constraint bit on which node.

/** Share of a GPU's memory an engine may plan to use; the rest is headroom. */
export const USABLE_GPU_MEMORY = 0.9;

export interface FleetGpu {
  index: number;
  memoryTotalMiB: number;
  memoryUsedMiB: number;
  computeCapability: number;
}

export interface FleetNode {
  id: string;
  cordoned: boolean;
  fresh: boolean;
  labels: Record<string, string>;
  gpus: FleetGpu[];
  /** GPU indexes already given to replicas. */
  busyGpus: number[];
  modelReplicas: number;
  totalReplicas: number;
}

export interface Requirement {
  count: number;
  gpusPerReplica: number;
  minComputeCapability: number;
  /** Weights plus the KV cache the context needs, per GPU of a replica. */
  memoryPerGpuMiB: number;
  labels: Record<string, string>;
  /** Nodes where the model failed just now: used only when nothing else fits. */
  avoid: string[];
}

export type Placement =
  | { ok: true; replicas: { nodeId: string; gpus: number[] }[] }
  | { ok: false; reason: string; nodes: { node: string; reason: string }[] };

/** The GPUs of `node` one replica could use now, or why there are not enough. */
function gpusFor(node: FleetNode, req: Requirement, taken: Set<number>): number[] | string {
  if (req.gpusPerReplica === 0) return [];
  const free = node.gpus.filter((g) => !taken.has(g.index));
  const capable = free.filter((g) => g.computeCapability >= req.minComputeCapability);
  const roomy = capable.filter((g) => g.memoryTotalMiB * USABLE_GPU_MEMORY - g.memoryUsedMiB >= req.memoryPerGpuMiB);
  if (roomy.length >= req.gpusPerReplica) return roomy.slice(0, req.gpusPerReplica).map((g) => g.index);
  if (node.gpus.length === 0) return "has no GPU";
  if (capable.length < req.gpusPerReplica) {
    return `needs ${req.gpusPerReplica} free GPU(s) with compute capability ≥ ${req.minComputeCapability}; has ${capable.length} (of ${node.gpus.length}, ${taken.size} in use)`;
  }
  const best = Math.max(...capable.map((g) => g.memoryTotalMiB * USABLE_GPU_MEMORY - g.memoryUsedMiB));
  return `needs ${gib(req.memoryPerGpuMiB)} GiB on each of ${req.gpusPerReplica} GPU(s); the most any free GPU offers is ${gib(best)} GiB (90% of its memory, less what is used)`;
}

const gib = (mib: number) => (mib / 1024).toFixed(1);

function refusal(node: FleetNode, req: Requirement, taken: Set<number>): string | null {
  if (!node.fresh) return "not heard from recently";
  if (node.cordoned) return "cordoned";
  for (const [k, v] of Object.entries(req.labels)) {
    if (node.labels[k] !== v) return `label ${k}=${v} wanted, node has ${k}=${node.labels[k] ?? "(none)"}`;
  }
  const g = gpusFor(node, req, taken);
  return typeof g === "string" ? g : null;
}

/**
 * Spreads replicas over nodes: fewest replicas of this model first, then least loaded, with the
 * nodes to avoid last. Each chosen replica takes its GPUs before the next is placed.
 */
export function place(fleet: FleetNode[], req: Requirement): Placement {
  if (fleet.length === 0) return { ok: false, reason: "no node has registered", nodes: [] };
  const state = new Map(fleet.map((n) => [n.id, { node: n, taken: new Set(n.busyGpus), model: n.modelReplicas, total: n.totalReplicas }]));
  const avoid = new Set(req.avoid);
  const replicas: { nodeId: string; gpus: number[] }[] = [];
  for (let i = 0; i < req.count; i++) {
    const candidates = [...state.values()]
      .filter((s) => refusal(s.node, req, s.taken) === null)
      .sort((a, b) => Number(avoid.has(a.node.id)) - Number(avoid.has(b.node.id)) || a.model - b.model || a.total - b.total || a.node.id.localeCompare(b.node.id));
    const best = candidates[0];
    if (!best) {
      const nodes = [...state.values()].map((s) => ({ node: s.node.id, reason: refusal(s.node, req, s.taken)! }));
      const placed = i > 0 ? ` (${i} of ${req.count} placed)` : "";
      return { ok: false, reason: `no node can take another replica${placed}: ${nodes.map((n) => `${n.node}: ${n.reason}`).join("; ")}`, nodes };
    }
    const gpus = gpusFor(best.node, req, best.taken) as number[];
    for (const g of gpus) best.taken.add(g);
    best.model += 1;
    best.total += 1;
    replicas.push({ nodeId: best.node.id, gpus });
  }
  return { ok: true, replicas };
}
