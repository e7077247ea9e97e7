// Whether an engine has shown up on its GPUs: a /health that answers is not enough for a GPU engine
// (the process may answer before it holds its devices, or hold the wrong ones). nvidia-smi's compute
// apps must list a process of the engine's process group on every GPU assigned to it. The pids
// nvidia-smi gives are the host's: an agent in a container of its own pid namespace sees other pids
// and would never see its engines ready (run the agent in the host's pid namespace).
import fs from "node:fs";
import { discoverGpus, run } from "../discovery/inventory.ts";

export interface ComputeApp {
  pid: number;
  gpuUuid: string;
  usedMemoryMib: number;
}

/** Parses `nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader,nounits`. Pure. */
export function parseComputeApps(csv: string): ComputeApp[] {
  const out: ComputeApp[] = [];
  for (const raw of csv.split(/\r?\n/)) {
    const cells = raw.split(",").map((c) => c.trim());
    if (cells.length < 3) continue;
    const pid = Number.parseInt(cells[0]!, 10);
    if (!Number.isInteger(pid) || pid <= 0 || !cells[1]) continue;
    const mem = Number.parseInt(cells[2]!, 10);
    out.push({ pid, gpuUuid: cells[1], usedMemoryMib: Number.isFinite(mem) ? mem : 0 });
  }
  return out;
}

/** The GPUs (by UUID) of `wanted` on which none of `pids` runs. Pure. */
export function missingGpus(apps: ComputeApp[], pids: ReadonlySet<number>, wanted: readonly string[]): string[] {
  const held = new Set(apps.filter((a) => pids.has(a.pid)).map((a) => a.gpuUuid));
  return wanted.filter((u) => !held.has(u));
}

/** Pids of the process group `pgid`, from /proc/<pid>/stat (the fifth field). */
export function processGroupPids(pgid: number, proc = "/proc"): Set<number> {
  const out = new Set<number>();
  let names: string[];
  try {
    names = fs.readdirSync(proc);
  } catch {
    return out;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`${proc}/${name}/stat`, "utf8");
      // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
      const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(rest[2]) === pgid) out.add(Number(name));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/**
 * True when the engine whose process group is `pgid` runs on each GPU of `indices`, or when this
 * node has no GPUs nvidia-smi can see (a CPU node, or GPUs assigned by index to a sim).
 */
export async function onItsGpus(pgid: number, indices: readonly number[], nvidiaSmi: string): Promise<boolean> {
  if (indices.length === 0) return true;
  const gpus = await discoverGpus(nvidiaSmi);
  if (gpus.length === 0) return true;
  const wanted = indices.map((i) => gpus.find((g) => g.index === i)?.uuid ?? `index ${i}`);
  let apps: ComputeApp[];
  try {
    apps = parseComputeApps((await run(nvidiaSmi, ["--query-compute-apps=pid,gpu_uuid,used_memory", "--format=csv,noheader,nounits"], 5000)).stdout);
  } catch {
    return false;
  }
  return missingGpus(apps, processGroupPids(pgid), wanted).length === 0;
}
