// The shapes the admin API gives for models and nodes (gateway/admin-api/models.ts, nodes.ts).
import { api } from "../api.ts";

export interface ModelRow {
  name: string;
  versions: { version: string; engine: string }[];
  replicas: { id: string; version: string; node: string; state: string; url: string | null }[];
  ready: number;
}

export interface ModelDetail {
  name: string;
  state: { desired: { version: string; engine: string; replicas: number } | null; parked?: string | null } | null;
  workflow?: { id: string; uiUrl: string };
}

export interface Gpu {
  index?: number;
  name?: string;
  memoryTotalMib?: number;
  memoryUsedMib?: number;
  utilizationPct?: number;
  memory_total_mib?: number;
  memory_used_mib?: number;
  utilization_pct?: number;
  /** The PCIe link now and at best (agent/discovery/inventory.ts): a card trained down shows it. */
  pcieGenCurrent?: number;
  pcieGenMax?: number;
  pcieWidthCurrent?: number;
  pcieWidthMax?: number;
}

export interface NodeRow {
  id: string;
  address: string;
  cordoned: boolean;
  lastSeen: string | null;
  replicas: number;
  labels: Record<string, string> | null;
  inventory: { gpus?: Gpu[]; memoryReadGbps?: number; [k: string]: unknown } | null;
}

export const listModels = () => api.get<{ data: ModelRow[] }>("/models").then((b) => b.data);
export const listNodes = () => api.get<{ data: NodeRow[] }>("/nodes").then((b) => b.data);

/** Each model with its detail (the desired replicas come from its entity workflow's state). */
export async function modelsWithDetail(): Promise<{ row: ModelRow; detail: ModelDetail | null }[]> {
  const rows = await listModels();
  return Promise.all(rows.map(async (row) => ({ row, detail: await api.get<ModelDetail>(`/models/${encodeURIComponent(row.name)}`).catch(() => null) })));
}

/** Ready replicas per version, as shares of the ready ones: how the router splits traffic between them. */
export function versionShares(row: ModelRow): string {
  const ready = row.replicas.filter((r) => r.state === "ready");
  if (!ready.length) return "—";
  const by = new Map<string, number>();
  for (const r of ready) by.set(r.version, (by.get(r.version) ?? 0) + 1);
  return [...by].map(([v, n]) => `${v} ${Math.round((100 * n) / ready.length)}%`).join(", ");
}

export function gpuText(g: Gpu, memory: string): string {
  const total = g.memoryTotalMib ?? g.memory_total_mib ?? 0;
  const used = g.memoryUsedMib ?? g.memory_used_mib ?? 0;
  const util = g.utilizationPct ?? g.utilization_pct;
  return `${g.name ?? "GPU"}${g.index !== undefined ? ` #${g.index}` : ""}: ${memory} ${Math.round(used / 1024)}/${Math.round(total / 1024)} GiB${util !== undefined ? `, ${util}%` : ""}${pcieText(g)}`;
}

/** ", PCIe Gen4 x16", with what the link could do when it runs below it (", PCIe Gen3 x8 of Gen4 x16"). */
function pcieText(g: Gpu): string {
  const { pcieGenCurrent: gen, pcieWidthCurrent: width, pcieGenMax: genMax, pcieWidthMax: widthMax } = g;
  if (!gen || !width) return "";
  const slower = (genMax && genMax > gen) || (widthMax && widthMax > width);
  return `, PCIe Gen${gen} x${width}${slower ? ` of Gen${genMax ?? gen} x${widthMax ?? width}` : ""}`;
}
