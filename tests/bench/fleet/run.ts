// Fleet-scale benchmark of the control plane (not part of the test suite):
//   node --import tsx tests/bench/fleet/run.ts [--nodes 100 --gpus 8 --models 50 --replicas 8
//     --canaries 10 --wave 4 --heartbeat-ms 5000 --phase-timeout-s 900]
// A platform (gateway, Temporal worker, usage worker: real processes on the real services) and
// `--nodes` simulated agents in this process (fake-agents.ts). Catalog-adds `--models` models with
// one H100-class GPU per replica, serves them all at once, upgrades them all at once in waves of
// `--wave`, then canaries `--canaries` of them (3 s, no traffic: judged "too few requests" and
// rolled back). Prints each phase's wall time, the Temporal history length of every workflow it
// ran, activities per second (ActivityTaskCompleted events in the phase's workflows over its wall
// time), activity and workflow-task latencies from the histories, the worker's and gateway's CPU
// seconds (/proc/<pid>/stat) and the Temporal worker's RSS (sampled from /proc/<pid>/status every
// 250 ms, and its VmHWM). Loopback only; every wait is bounded by --phase-timeout-s.
import fs from "node:fs";
import { parseArgs } from "node:util";
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { WorkflowNotFoundError, type Client } from "@temporalio/client";
import { waitFor } from "../../../common/children.ts";
import { setLogProcess } from "../../../common/logging.ts";
import { temporalClient } from "../../../common/temporal.ts";
import { startPlatform, type Platform } from "../../helpers/platform.ts";
import { startFakeFleet, type FakeFleet } from "./fake-agents.ts";

const FLAGS = ["nodes", "gpus", "models", "replicas", "canaries", "wave", "heartbeat-ms", "phase-timeout-s"] as const;
const camel = (k: string) => k.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
const { values } = parseArgs({ options: Object.fromEntries(FLAGS.map((k) => [k, { type: "string" as const }])) });
const o = z
  .object({
    nodes: z.coerce.number().int().min(1).max(500).default(100),
    gpus: z.coerce.number().int().min(1).max(16).default(8),
    models: z.coerce.number().int().min(1).max(500).default(50),
    replicas: z.coerce.number().int().min(1).max(100).default(8),
    canaries: z.coerce.number().int().min(0).max(500).default(10),
    wave: z.coerce.number().int().min(1).max(100).default(4),
    heartbeatMs: z.coerce.number().int().min(200).max(10_000).default(5000),
    phaseTimeoutS: z.coerce.number().int().min(10).max(3600).default(900),
  })
  .parse(Object.fromEntries(Object.entries(values).map(([k, v]) => [camel(k), v])));
if (o.canaries > o.models) throw new Error("--canaries must be at most --models");

// ---------------------------------------------------------------------------------------------
// Memory of a process, from /proc

function procKiB(pid: number, field: "VmRSS" | "VmHWM"): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

class RssSampler {
  peak = 0;
  last = 0;
  private timer: NodeJS.Timeout;
  constructor(private pid: number) {
    this.timer = setInterval(() => this.sample(), 250);
    this.timer.unref();
  }
  sample(): number {
    this.last = procKiB(this.pid, "VmRSS");
    this.peak = Math.max(this.peak, this.last);
    return this.last;
  }
  /** Peak since the last reset (the phase's). */
  reset(): void {
    this.peak = this.sample();
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

/** utime + stime of a process in seconds, from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    return 0;
  }
}
const CLK_TCK = 100;

const mib = (kib: number) => (kib / 1024).toFixed(0);

// ---------------------------------------------------------------------------------------------
// Operations

interface Phase {
  name: string;
  ops: number;
  wallS: number;
  opS: number[];
  failed: string[];
  workerPeakKiB: number;
  /** CPU seconds the Temporal worker and the gateway used during the phase. */
  workerCpuS: number;
  gatewayCpuS: number;
  workflows: string[];
}

/** Waits for a workflow the entity may not have started yet, then for its result. */
async function finished(client: Client, id: string, timeoutMs: number): Promise<{ ok: boolean; error?: string; result?: unknown }> {
  const handle = client.workflow.getHandle(id);
  await waitFor(`${id} to start`, async () => handle.describe().then(() => true, (e: unknown) => (e instanceof WorkflowNotFoundError ? false : Promise.reject(e))), timeoutMs, 500);
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${id} still running after ${timeoutMs} ms`)), timeoutMs).unref());
  try {
    return { ok: true, result: await Promise.race([handle.result(), timeout]) };
  } catch (err) {
    let e: unknown = err;
    while (e instanceof Error && e.cause instanceof Error) e = e.cause;
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

async function runPhase(
  name: string,
  models: string[],
  start: (model: string) => Promise<{ operationId: string }>,
  ctx: { client: Client; rss: RssSampler; workerPid: number; gatewayPid: number },
): Promise<Phase & { results: unknown[] }> {
  ctx.rss.reset();
  const cpu0 = [cpuSeconds(ctx.workerPid), cpuSeconds(ctx.gatewayPid)];
  const t0 = performance.now();
  const opS: number[] = [];
  const failed: string[] = [];
  const results: unknown[] = [];
  const workflows: string[] = [];
  await Promise.all(
    models.map(async (m) => {
      const { operationId } = await start(m);
      workflows.push(operationId);
      const r = await finished(ctx.client, operationId, o.phaseTimeoutS * 1000);
      opS.push((performance.now() - t0) / 1000);
      if (!r.ok) failed.push(`${m}: ${r.error}`);
      results.push(r.result);
    }),
  );
  const wallS = (performance.now() - t0) / 1000;
  process.stderr.write(`${name}: ${models.length} operation(s) in ${wallS.toFixed(1)} s${failed.length ? `, ${failed.length} failed: ${failed.slice(0, 3).join("; ")}` : ""}\n`);
  const workerCpuS = cpuSeconds(ctx.workerPid) - cpu0[0]!;
  const gatewayCpuS = cpuSeconds(ctx.gatewayPid) - cpu0[1]!;
  return { name, ops: models.length, wallS, opS, failed, workerPeakKiB: ctx.rss.peak, workerCpuS, gatewayCpuS, workflows, results };
}

interface HistoryFigures {
  id: string;
  events: number;
  activities: number;
  /** Per completed activity: ms from scheduled to picked up by the worker, and from then to done. */
  activityWaitMs: number[];
  activityRunMs: number[];
  /** Per workflow task: ms from scheduled to picked up. */
  workflowTaskWaitMs: number[];
  /** Run ms of each completed activity, by activity type. */
  runByType: Map<string, number[]>;
}

type Ts = { seconds?: unknown; nanos?: number | null } | null | undefined;
const ms = (t: Ts) => (t ? Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6 : 0);

/** History length, completed activities and task latencies of a workflow. */
async function history(client: Client, id: string): Promise<HistoryFigures> {
  const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
  const at = new Map(events.map((e) => [Number(e.eventId), ms(e.eventTime as Ts)]));
  const f: HistoryFigures = { id, events: events.length, activities: 0, activityWaitMs: [], activityRunMs: [], workflowTaskWaitMs: [], runByType: new Map() };
  const typeOf = new Map(events.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => [Number(e.eventId), e.activityTaskScheduledEventAttributes!.activityType?.name ?? "?"]));
  for (const e of events) {
    const done = e.activityTaskCompletedEventAttributes;
    if (done) {
      f.activities += 1;
      const scheduled = at.get(Number(done.scheduledEventId))!;
      const started = at.get(Number(done.startedEventId))!;
      f.activityWaitMs.push(started - scheduled);
      f.activityRunMs.push(ms(e.eventTime as Ts) - started);
      const type = typeOf.get(Number(done.scheduledEventId))!;
      f.runByType.set(type, [...(f.runByType.get(type) ?? []), ms(e.eventTime as Ts) - started]);
    }
    const wft = e.workflowTaskStartedEventAttributes;
    if (wft) f.workflowTaskWaitMs.push(ms(e.eventTime as Ts) - at.get(Number(e.eventId) - 1)!);
  }
  return f;
}

// ---------------------------------------------------------------------------------------------

interface ModelView {
  data: { name: string; replicas: { version: string; state: string }[] }[];
}

async function checkServing(p: Platform, fleet: FakeFleet, models: string[], version: string): Promise<string[]> {
  const problems: string[] = [];
  const all = await p.admin<ModelView>("GET", "/models");
  for (const m of models) {
    const row = all.data.find((x) => x.name === m);
    const ready = row?.replicas.filter((r) => r.state === "ready" && r.version === version).length ?? 0;
    if (ready !== o.replicas || row!.replicas.length !== o.replicas) problems.push(`${m}: ${ready} ready on ${version} of ${row?.replicas.length ?? 0}`);
  }
  const expected = models.length * o.replicas;
  if (fleet.running() !== expected) problems.push(`the agents run ${fleet.running()} replicas, ${expected} expected`);
  return problems;
}

async function main(): Promise<void> {
  // A hundred agents each log their registration: only warnings matter here.
  setLogProcess("fleet-bench", "warn");
  const run = randomBytes(3).toString("hex");
  const models = Array.from({ length: o.models }, (_, i) => `fleet-${run}-${String(i).padStart(3, "0")}`);
  process.stderr.write(`fleet bench ${run}: ${o.nodes} nodes × ${o.gpus} GPUs, ${o.models} models × ${o.replicas} replicas, wave ${o.wave}, ${o.canaries} canaries\n`);

  // Plaintext gRPC: the fake agents measure placement at scale, not enrolment (hundreds in one process).
  const p = await startPlatform({ processes: ["gateway", "worker-temporal", "worker-usage"], env: { LLMGW_HEARTBEAT_MS: String(o.heartbeatMs), LLMGW_INSECURE_GRPC: "1" } });
  const t = await temporalClient();
  let fleet: FakeFleet | undefined;
  const entityIds = models.map((m) => `model/${m}`);
  try {
    fleet = await startFakeFleet({
      nodes: o.nodes,
      gpusPerNode: o.gpus,
      controlAddress: p.env.LLMGW_CONTROL_ADDRESS!,
      token: p.env.LLMGW_CLUSTER_TOKEN!,
      heartbeatMs: o.heartbeatMs,
      prefix: `fleet-${run}`,
    });
    const tReg = performance.now();
    await waitFor("every fake agent to register", async () => (await p.admin<{ data: unknown[] }>("GET", "/nodes")).data.length === o.nodes, 120_000, 500);
    const registerS = (performance.now() - tReg) / 1000;

    const workerPid = p.children.get("worker-temporal")!.proc.pid!;
    const rss = new RssSampler(workerPid);
    const idleKiB = rss.sample();

    const tCat = performance.now();
    for (const name of models) {
      await p.admin("POST", "/models", {
        name,
        versions: ["v1", "v2", "v3"].map((version) => ({ version, engine: "sim" })),
        profiles: [{ name: "h100", gpu: { min_compute_capability: 9.0, min_memory_gb: 40 }, gpus_per_replica: 1, replicas: o.replicas }],
      });
    }
    const catalogS = (performance.now() - tCat) / 1000;

    const ctx = { client: t.client, rss, workerPid, gatewayPid: p.children.get("gateway")!.proc.pid! };
    const phases: Phase[] = [];
    const problems: string[] = [];

    const serve = await runPhase(`serve ${o.models}×${o.replicas}`, models, (m) => p.admin("POST", `/models/${m}/serve`, { version: "v1", replicas: o.replicas }), ctx);
    phases.push(serve);
    problems.push(...(await checkServing(p, fleet, models, "v1")).map((x) => `after serve: ${x}`));

    const upgrade = await runPhase(`upgrade ${o.models * o.replicas} replicas, wave ${o.wave}`, models, (m) => p.admin("POST", `/models/${m}/upgrade`, { version: "v2", wave: o.wave }), ctx);
    phases.push(upgrade);
    problems.push(...(await checkServing(p, fleet, models, "v2")).map((x) => `after upgrade: ${x}`));

    if (o.canaries > 0) {
      const canary = await runPhase(`canary ${o.canaries} (3 s, no traffic)`, models.slice(0, o.canaries), (m) =>
        p.admin("POST", `/models/${m}/canary`, { version: "v3", weight: 10, for: "3s", window: "1s", replicas: 1 }), ctx);
      phases.push(canary);
      const decisions = new Map<string, number>();
      for (const r of canary.results as { decision?: string }[]) decisions.set(r?.decision ?? "none", (decisions.get(r?.decision ?? "none") ?? 0) + 1);
      process.stderr.write(`canary decisions: ${JSON.stringify(Object.fromEntries(decisions))}\n`);
      problems.push(...(await checkServing(p, fleet, models, "v2")).map((x) => `after canary: ${x}`));
    }
    rss.stop();
    const hwmKiB = procKiB(workerPid, "VmHWM");

    // Histories: each phase's operation workflows, and the models' entity workflows.
    const rows: string[][] = [];
    const histories: { phase: string; h: HistoryFigures[] }[] = [];
    for (const ph of phases) {
      const h: HistoryFigures[] = [];
      for (const id of ph.workflows) h.push(await history(t.client, id));
      histories.push({ phase: ph.name, h });
    }
    const entities: HistoryFigures[] = [];
    for (const id of entityIds) entities.push(await history(t.client, id));

    const stat = (xs: number[]) => ({ max: Math.max(...xs), mean: xs.reduce((a, b) => a + b, 0) / xs.length });
    for (const [i, ph] of phases.entries()) {
      const h = histories[i]!.h;
      const ev = stat(h.map((x) => x.events));
      const acts = h.reduce((a, x) => a + x.activities, 0);
      const ops = [...ph.opS].sort((a, b) => a - b);
      rows.push([
        ph.name,
        `${ph.wallS.toFixed(1)}`,
        `${ops[Math.floor(ops.length / 2)]!.toFixed(1)} / ${ops.at(-1)!.toFixed(1)}`,
        `${ev.max} / ${ev.mean.toFixed(0)}`,
        `${acts}`,
        `${(acts / ph.wallS).toFixed(1)}`,
        `${stat(h.flatMap((x) => x.activityWaitMs)).mean.toFixed(0)} / ${stat(h.flatMap((x) => x.activityRunMs)).mean.toFixed(0)}`,
        `${stat(h.flatMap((x) => x.workflowTaskWaitMs)).mean.toFixed(0)}`,
        `${ph.workerCpuS.toFixed(1)} / ${ph.gatewayCpuS.toFixed(1)}`,
        `${mib(ph.workerPeakKiB)}`,
        `${ph.failed.length}`,
      ]);
    }
    const byType = histories.map(({ phase, h }) => {
      const all = new Map<string, number[]>();
      for (const x of h) for (const [k, v] of x.runByType) all.set(k, [...(all.get(k) ?? []), ...v]);
      const parts = [...all].map(([k, v]) => ({ k, n: v.length, mean: stat(v).mean })).sort((a, b) => b.mean - a.mean);
      return `  ${phase}: ${parts.map((x) => `${x.k} ×${x.n} ${x.mean.toFixed(0)} ms`).join(", ")}`;
    });
    const ev = stat(entities.map((x) => x.events));
    const widths = ["phase", "wall s", "op done p50 / max s", "history max / mean", "activities", "activities/s", "activity wait / run ms", "wf task wait ms", "worker / gateway CPU s", "worker RSS peak MiB", "failed"];
    const table = [widths, ...rows];
    const w = widths.map((_, c) => Math.max(...table.map((r) => r[c]!.length)));
    const line = (r: string[]) => `| ${r.map((x, c) => (c === 0 ? x.padEnd(w[c]!) : x.padStart(w[c]!))).join(" | ")} |`;
    const out = [
      "",
      `fleet: ${o.nodes} nodes × ${o.gpus} GPUs registered in ${registerS.toFixed(1)} s; ${o.models} models catalog-added in ${catalogS.toFixed(1)} s`,
      line(widths),
      `|${w.map((x, c) => (c === 0 ? "-".repeat(x + 2) : `${"-".repeat(x + 1)}:`)).join("|")}|`,
      ...rows.map(line),
      "activity run time (started to completed), mean by type:",
      ...byType,
      `entity workflows (model/<name>): history max ${ev.max}, mean ${ev.mean.toFixed(0)} events`,
      `largest history of all: ${Math.max(ev.max, ...histories.flatMap((x) => x.h.map((y) => y.events)))} events (limit 10,000)`,
      `worker RSS: ${mib(idleKiB)} MiB idle before serving, ${mib(rss.last)} MiB at the end, VmHWM ${mib(hwmKiB)} MiB`,
      `agent calls: ${JSON.stringify(fleet.calls)}; starts given a GPU another running replica held: ${fleet.gpuConflicts}; most replicas on one GPU at the end: ${fleet.maxPerGpu()}`,
      `bench process (fake agents + sim) RSS ${mib(procKiB(process.pid, "VmRSS"))} MiB; gateway RSS ${mib(procKiB(p.children.get("gateway")!.proc.pid!, "VmRSS"))} MiB`,
      problems.length ? `PROBLEMS:\n  ${problems.join("\n  ")}` : "checks: every model served its replicas, all ready, on the expected version, after each phase",
    ];
    process.stdout.write(out.join("\n") + "\n");
    process.exitCode = problems.length || phases.some((x) => x.failed.length) ? 1 : 0;
  } finally {
    // Entity workflows wait for commands forever; this run's are of no further use.
    await Promise.all(entityIds.map((id) => t.client.workflow.getHandle(id).terminate("fleet bench done").catch(() => undefined)));
    await fleet?.close();
    await t.close();
    await p.stop();
  }
}

await main();
