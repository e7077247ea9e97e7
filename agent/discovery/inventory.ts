// What this node has: CPUs, memory (and its measured read rate), free disk under the data directory,
// GPUs (from nvidia-smi when it is installed, with their MIG devices), labels. Describe answers with it and every heartbeat carries it.
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import type { Gpu__Output } from "../../common/generated/proto/llmgw/agent/v1/Gpu.ts";
import type { NodeInfo } from "../../common/proto.ts";
import { log } from "../../common/logging.ts";

/** Columns asked of nvidia-smi, in order. Older drivers (before ~510) do not know compute_cap. */
export const GPU_QUERY_COLUMNS = [
  "index",
  "name",
  "uuid",
  "memory.total",
  "memory.used",
  "compute_cap",
  "driver_version",
  "temperature.gpu",
  "power.draw",
  "power.limit",
  "utilization.gpu",
  "pcie.link.gen.current",
  "pcie.link.gen.max",
  "pcie.link.width.current",
  "pcie.link.width.max",
] as const;
export type GpuColumn = (typeof GPU_QUERY_COLUMNS)[number];
export const LEGACY_COLUMNS: readonly GpuColumn[] = GPU_QUERY_COLUMNS.filter((c) => c !== "compute_cap");

export type ParsedGpu = Gpu__Output;
export type MigInstance = ParsedGpu["mig"][number];

/** "[N/A]", "[Not Supported]", "N/A" and the empty string mean "unknown". */
function unknown(v: string): boolean {
  return v === "" || /^\[?(n\/a|not supported|unknown error|insufficient permissions|gpu requires reset)\]?$/i.test(v);
}

function int(v: string): number {
  if (unknown(v)) return 0;
  const n = Number.parseInt(v, 10);
  return Number.isFinite(n) ? n : 0;
}

function num(v: string): number {
  if (unknown(v)) return 0;
  const n = Number.parseFloat(v);
  return Number.isFinite(n) ? n : 0;
}

/**
 * Parses `nvidia-smi --query-gpu=<columns> --format=csv,noheader,nounits`. Pure. Blank lines are
 * skipped; a name holding a comma is kept whole (the other columns never hold one); a line with too
 * few columns is skipped. Unknown values ("[N/A]", "[Not Supported]") become 0 or "".
 */
export function parseNvidiaSmiCsv(csv: string, columns: readonly GpuColumn[] = GPU_QUERY_COLUMNS): ParsedGpu[] {
  const out: ParsedGpu[] = [];
  const nameAt = columns.indexOf("name");
  for (const raw of csv.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line) continue;
    let cells = line.split(",").map((c) => c.trim());
    if (cells.length < columns.length) continue;
    if (cells.length > columns.length && nameAt >= 0) {
      const extra = cells.length - columns.length;
      const name = cells.slice(nameAt, nameAt + extra + 1).join(", ");
      cells = [...cells.slice(0, nameAt), name, ...cells.slice(nameAt + extra + 1)];
    }
    const get = (c: GpuColumn): string => {
      const i = columns.indexOf(c);
      const v = i < 0 ? "" : (cells[i] ?? "");
      return unknown(v) ? "" : v;
    };
    out.push({
      index: int(get("index")),
      name: get("name"),
      uuid: get("uuid"),
      memoryTotalMib: int(get("memory.total")),
      memoryUsedMib: int(get("memory.used")),
      computeCapability: get("compute_cap"),
      driverVersion: get("driver_version"),
      temperatureC: int(get("temperature.gpu")),
      powerDrawW: num(get("power.draw")),
      powerLimitW: num(get("power.limit")),
      utilizationPct: int(get("utilization.gpu")),
      pcieGenCurrent: int(get("pcie.link.gen.current")),
      pcieGenMax: int(get("pcie.link.gen.max")),
      pcieWidthCurrent: int(get("pcie.link.width.current")),
      pcieWidthMax: int(get("pcie.link.width.max")),
      mig: [],
    });
  }
  return out;
}

/**
 * Parses `nvidia-smi -L`: MIG devices by the UUID of the GPU they are carved from. Pure.
 *   GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-...)
 *     MIG 3g.40gb     Device  0: (UUID: MIG-...)
 */
export function parseMigList(text: string): Map<string, MigInstance[]> {
  const out = new Map<string, MigInstance[]>();
  let gpu: MigInstance[] | undefined;
  for (const line of text.split(/\r?\n/)) {
    const g = /^GPU \d+: .*\(UUID: (GPU-[^)\s]+)\)/.exec(line);
    if (g) {
      gpu = [];
      out.set(g[1]!, gpu);
      continue;
    }
    const m = /^\s+MIG (\S+)\s+Device\s+(\d+): \(UUID: (MIG-[^)\s]+)\)/.exec(line);
    if (m && gpu) gpu.push({ profile: m[1]!, device: Number(m[2]), uuid: m[3]! });
  }
  return out;
}

/** The GPUs with their MIG devices attached. */
export function withMig(gpus: ParsedGpu[], mig: Map<string, MigInstance[]>): ParsedGpu[] {
  return gpus.map((g) => ({ ...g, mig: mig.get(g.uuid) ?? [] }));
}

/** Parses LLMGW_NODE_LABELS, `k=v,k=v`. Throws with the variable's name on a malformed entry. */
export function parseLabels(text: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {};
  if (!text) return labels;
  for (const part of text.split(",")) {
    const entry = part.trim();
    if (!entry) continue;
    const eq = entry.indexOf("=");
    const key = eq < 0 ? "" : entry.slice(0, eq).trim();
    if (!key) throw new Error(`LLMGW_NODE_LABELS: "${entry}" is not key=value`);
    labels[key] = entry.slice(eq + 1).trim();
  }
  return labels;
}

export function run(cmd: string, args: string[], timeoutMs: number): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: timeoutMs, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) reject(Object.assign(err, { stdout: String(stdout), stderr: String(stderr) }));
      else resolve({ stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

// A node without nvidia-smi does not grow one: remember that for a minute rather than spawning a
// process on every heartbeat.
const absentUntil = new Map<string, number>();
let warned = false;

async function queryGpus(nvidiaSmi: string): Promise<ParsedGpu[]> {
  const query = (cols: readonly GpuColumn[]) =>
    run(nvidiaSmi, [`--query-gpu=${cols.join(",")}`, "--format=csv,noheader,nounits"], 5000);
  try {
    const { stdout } = await query(GPU_QUERY_COLUMNS);
    return parseNvidiaSmiCsv(stdout, GPU_QUERY_COLUMNS);
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string; stdout?: string };
    // Drivers before ~510 answer 'Field "compute_cap" is not a valid field to query.' (the error's
    // message holds the command line, which names compute_cap anyway: look at the output only).
    const said = `${e.stdout ?? ""}${e.stderr ?? ""}`;
    if (e.code === "ENOENT" || !/compute_cap"? is not a valid field/i.test(said)) throw err;
    const { stdout } = await query(LEGACY_COLUMNS);
    return parseNvidiaSmiCsv(stdout, LEGACY_COLUMNS);
  }
}

/** MIG devices; an empty map when `-L` fails (MIG is extra, not worth losing the GPUs over). */
async function queryMig(nvidiaSmi: string): Promise<Map<string, MigInstance[]>> {
  try {
    return parseMigList((await run(nvidiaSmi, ["-L"], 5000)).stdout);
  } catch {
    return new Map();
  }
}

/** GPUs seen by nvidia-smi; an empty list when it is absent or fails, never an error. */
export async function discoverGpus(nvidiaSmi: string): Promise<ParsedGpu[]> {
  if (Date.now() < (absentUntil.get(nvidiaSmi) ?? 0)) return [];
  try {
    const gpus = await queryGpus(nvidiaSmi);
    return gpus.length > 0 ? withMig(gpus, await queryMig(nvidiaSmi)) : gpus;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === "ENOENT") {
      absentUntil.set(nvidiaSmi, Date.now() + 60_000);
      return [];
    }
    if (!warned) log.warn("nvidia-smi failed; reporting no GPUs", { err: e });
    warned = true;
    return [];
  }
}

/** Free bytes for an unprivileged user on the filesystem holding `dir`; 0 when unknown. */
export async function diskFreeBytes(dir: string): Promise<number> {
  try {
    const s = await fs.statfs(dir);
    return Number(s.bavail) * Number(s.bsize);
  } catch {
    return 0;
  }
}

export interface InventoryInput {
  nodeId: string;
  address: string;
  dataDir: string;
  labels: Record<string, string>;
  agentVersion: string;
  /** The nvidia-smi to ask (LLMGW_NVIDIA_SMI). */
  nvidiaSmi: string;
  /** The best memory read rate measured so far (GB/s); 0 while none is. */
  memoryReadGbps?: number;
}

export async function inventory(input: InventoryInput): Promise<NodeInfo> {
  const cpus = os.cpus();
  const [gpus, diskFree] = await Promise.all([discoverGpus(input.nvidiaSmi), diskFreeBytes(input.dataDir)]);
  return {
    nodeId: input.nodeId,
    address: input.address,
    cpuModel: cpus[0]?.model.trim() || "unknown",
    cpuCores: cpus.length || os.availableParallelism(),
    memoryTotalBytes: os.totalmem(),
    diskFreeBytes: diskFree,
    gpus,
    labels: { ...input.labels },
    agentVersion: input.agentVersion,
    memoryReadGbps: input.memoryReadGbps ?? 0,
  };
}
