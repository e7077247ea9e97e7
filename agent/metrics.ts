// The agent's Prometheus metrics: each GPU's memory, utilization, power against its limit and
// temperature (nvidia-smi, asked at scrape time), weight fetches (bytes and the current rate),
// engine starts and restarts, and replicas by state (the supervisor's list).
import { execFile } from "node:child_process";
import { Counter, Gauge, Registry } from "prom-client";
import { config } from "../common/config.ts";
import { collectProcessMetrics } from "../common/metrics-server.ts";
import type { FetchProgress } from "../common/generated/proto/llmgw/agent/v1/FetchProgress.ts";
import type { ReplicaStatus } from "../common/proto.ts";

/** Columns asked of nvidia-smi for telemetry, in order. */
export const GPU_TELEMETRY_COLUMNS = ["index", "uuid", "memory.used", "memory.total", "utilization.gpu", "power.draw", "power.limit", "temperature.gpu"] as const;

export interface GpuTelemetry {
  index: string;
  uuid: string;
  memoryUsedBytes: number | null;
  memoryTotalBytes: number | null;
  utilization: number | null;
  powerWatts: number | null;
  powerLimitWatts: number | null;
  temperatureC: number | null;
}

const MIB = 1024 * 1024;

function num(v: string | undefined): number | null {
  if (v === undefined || v === "" || /^\[?(n\/a|not supported|unknown error|insufficient permissions)\]?$/i.test(v)) return null;
  const n = Number.parseFloat(v);
  return Number.isFinite(n) ? n : null;
}

/** Parses `nvidia-smi --query-gpu=<GPU_TELEMETRY_COLUMNS> --format=csv,noheader,nounits`. Pure; unknown values are null. */
export function parseGpuTelemetry(csv: string): GpuTelemetry[] {
  const out: GpuTelemetry[] = [];
  for (const raw of csv.split(/\r?\n/)) {
    const c = raw.split(",").map((s) => s.trim());
    if (c.length < GPU_TELEMETRY_COLUMNS.length || !c[0]) continue;
    const used = num(c[2]);
    const total = num(c[3]);
    const util = num(c[4]);
    out.push({
      index: c[0],
      uuid: c[1] ?? "",
      memoryUsedBytes: used === null ? null : used * MIB,
      memoryTotalBytes: total === null ? null : total * MIB,
      utilization: util === null ? null : util / 100,
      powerWatts: num(c[5]),
      powerLimitWatts: num(c[6]),
      temperatureC: num(c[7]),
    });
  }
  return out;
}

/** GPU telemetry now; [] without nvidia-smi (a CPU node) or when it fails. */
export function readGpuTelemetry(nvidiaSmi: string): Promise<GpuTelemetry[]> {
  return new Promise((resolve) => {
    execFile(nvidiaSmi, [`--query-gpu=${GPU_TELEMETRY_COLUMNS.join(",")}`, "--format=csv,noheader,nounits"], { timeout: 5000 }, (err, stdout) =>
      resolve(err ? [] : parseGpuTelemetry(stdout)),
    );
  });
}

const STATES = ["REPLICA_STATE_STARTING", "REPLICA_STATE_READY", "REPLICA_STATE_DRAINING", "REPLICA_STATE_EXITED"] as const;
const stateLabel = (s: string) => s.replace(/^REPLICA_STATE_/, "").toLowerCase();

export class AgentMetrics {
  readonly registry = new Registry();
  private fetchBytes = new Counter({ name: "llmgw_agent_fetch_bytes_total", help: "Weight bytes fetched onto this node", registers: [this.registry] });
  private starts = new Counter({ name: "llmgw_agent_engine_starts_total", help: "Engine processes started, by engine", labelNames: ["engine"], registers: [this.registry] });
  private restarts = new Counter({ name: "llmgw_agent_engine_restarts_total", help: "Engines started again for a replica whose engine had exited, by engine", labelNames: ["engine"], registers: [this.registry] });
  /** Each fetch in progress: its last reported rate. */
  private fetching = new Map<object, number>();

  constructor(replicas: () => ReplicaStatus[], nvidiaSmi: string = config().LLMGW_NVIDIA_SMI) {
    collectProcessMetrics(this.registry, "llmgw_agent_");
    const fetching = this.fetching;
    new Gauge({
      name: "llmgw_agent_fetch_bytes_per_second",
      help: "Weight fetch rate now, all fetches in progress together",
      registers: [this.registry],
      collect() {
        this.set([...fetching.values()].reduce((a, b) => a + b, 0));
      },
    });
    new Gauge({
      name: "llmgw_agent_replicas",
      help: "Replicas on this node by state",
      labelNames: ["state"],
      registers: [this.registry],
      collect() {
        const counts = new Map<string, number>(STATES.map((s) => [s, 0]));
        for (const r of replicas()) counts.set(String(r.state), (counts.get(String(r.state)) ?? 0) + 1);
        this.reset();
        for (const [s, n] of counts) this.set({ state: stateLabel(s) }, n);
      },
    });
    // One nvidia-smi run per scrape serves every GPU gauge.
    let pending: Promise<GpuTelemetry[]> | null = null;
    const telemetry = () => (pending ??= readGpuTelemetry(nvidiaSmi).finally(() => setTimeout(() => (pending = null), 100).unref()));
    const gpuGauge = (name: string, help: string, pick: (g: GpuTelemetry) => number | null) =>
      new Gauge({
        name,
        help,
        labelNames: ["gpu", "uuid"],
        registers: [this.registry],
        async collect() {
          this.reset();
          for (const g of await telemetry()) {
            const v = pick(g);
            if (v !== null) this.set({ gpu: g.index, uuid: g.uuid }, v);
          }
        },
      });
    gpuGauge("llmgw_agent_gpu_memory_used_bytes", "GPU memory in use", (g) => g.memoryUsedBytes);
    gpuGauge("llmgw_agent_gpu_memory_total_bytes", "GPU memory in all", (g) => g.memoryTotalBytes);
    gpuGauge("llmgw_agent_gpu_utilization_ratio", "GPU utilization, 0..1", (g) => g.utilization);
    gpuGauge("llmgw_agent_gpu_power_watts", "GPU power draw", (g) => g.powerWatts);
    gpuGauge("llmgw_agent_gpu_power_limit_watts", "GPU power limit", (g) => g.powerLimitWatts);
    gpuGauge("llmgw_agent_gpu_temperature_celsius", "GPU temperature", (g) => g.temperatureC);
  }

  /** One fetch: `progress` wraps its progress callback (counts bytes, keeps its rate); `end` when it ends however it ends. */
  fetch(emit: (p: FetchProgress) => void): { progress: (p: FetchProgress) => void; end: () => void } {
    const key = {};
    let seen = 0;
    return {
      progress: (p) => {
        const bytes = Number(p.bytes ?? 0);
        if (bytes > seen) this.fetchBytes.inc(bytes - seen);
        seen = Math.max(seen, bytes);
        if (p.done) this.fetching.delete(key);
        else this.fetching.set(key, Number(p.bytesPerSecond ?? 0));
        emit(p);
      },
      end: () => void this.fetching.delete(key),
    };
  }

  /** Called before StartReplica: counts a start, and a restart when the replica's engine had exited. */
  starting(replicaId: string, engine: string, known: ReplicaStatus[]): void {
    const before = known.find((r) => r.replicaId === replicaId);
    if (before && String(before.state) !== "REPLICA_STATE_EXITED") return; // idempotent: already running
    this.starts.inc({ engine });
    if (before) this.restarts.inc({ engine });
  }
}
