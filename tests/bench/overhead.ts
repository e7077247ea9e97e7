// What the gateway adds to a request (not part of the test suite):
//   node --import tsx tests/bench/overhead.ts [--rates 100,500,1000,2000] [--seconds 3]
//     [--target URL --key K --model M] [--cpu-prof DIR] [--bare] [--no-limits] [--repeat N]
//     [--gateway-node-flags=FLAGS] [--gateway-nice=N] [--ledger-paused] [--bare-burn-us=N,...] [--guard]
// Starts a sim engine process and a whole platform (tests/helpers/platform.ts: needs the test
// services' env) serving one sim replica with the same settings, then drives the same short,
// non-streamed chat load at fixed rates, open loop, straight at the sim, through the gateway
// (key check, limits far above the load, and usage on) and straight at the gateway's own replica.
// Each target gets a second of the rate before its measured seconds (steady state; that second's
// p99 is printed apart). Prints p50/p99 of each, what the gateway added, the gateway process's CPU
// seconds per 1000 requests and how long its main thread waited for a CPU, the CPU time the host
// took away from this VM meanwhile (steal), what the rest of the platform (workers, agent,
// PostgreSQL, Redis) used meanwhile, and the load average.
// --cpu-prof DIR runs the gateway (only) under node --cpu-prof, the profile written to DIR at exit;
// --gateway-node-flags=FLAGS gives the gateway (only) node or V8 flags on its command line;
// --gateway-nice=N runs it under `nice -n N`.
// --bare adds a target "bare": a plain node http + undici forwarder to the sim (bare-proxy.ts),
// the floor any node proxy pays on this machine; its CPU is printed like the gateway's.
// --bare-burn-us=N,... adds a target "burnN" for each N: a bare forwarder that also spends N µs of
// CPU on each request (half on the way in, half on the way out), allocating nothing. Side by side
// they show what CPU per request alone costs at p99 here, apart from GC and batch work: the
// gateway's CPU per request less the bare one's is the N to compare the gateway with.
// --ledger-paused adds a target "gw-paused": the gateway again with the usage worker stopped meanwhile.
// --guard adds a target "gw-guard": the same gateway with a second key that a typical guardrail
// policy applies to (./guard-policy.ts: personal data, secrets, injection and a deny pattern on the
// input, secrets on the output; no judge), and prints its CPU per request and added p50/p99 against
// the plain key's, side by side in the same run.
import fs from "node:fs";
import { parseArgs } from "node:util";
import { Pool } from "undici";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { LLMGW_BIN, nodeFlagsFor, waitFor } from "../../common/children.ts";
import { loadConfig } from "../../common/config.ts";
import { engineKey } from "../../common/engine-key.ts";
import { startPlatform, uniqueModel } from "../helpers/platform.ts";
import { addGuardKey, guardRatios } from "./guard-policy.ts";
import { cpuSeconds, loadAverage, openLoop, runQueueWaitMs, repoRoot, startSimProcess, stealMs, type LoadResult, type Target } from "./load.ts";

const { values } = parseArgs({
  allowNegative: true,
  options: {
    rates: { type: "string", default: "100,500,1000,2000" },
    seconds: { type: "string", default: "3" },
    target: { type: "string" },
    key: { type: "string" },
    model: { type: "string", default: "sim-chat" },
    "cpu-prof": { type: "string" },
    bare: { type: "boolean", default: false },
    /** --no-limits: the bench key without limits (the limiter then only counts spend). */
    limits: { type: "boolean", default: true },
    /** Runs every rate this many times and prints the median of each figure too. */
    repeat: { type: "string", default: "1" },
    /**
     * --ledger-paused adds a target "gw-paused": the same gateway and key while the usage worker is
     * stopped (SIGSTOP; SIGCONT after), so the gateway still queues every event and the ledger writes
     * them afterwards. Shows side by side what the ledger writes (worker and PostgreSQL) sharing
     * these cores cost the gateway's latency.
     */
    "ledger-paused": { type: "boolean", default: false },
    /** Node/V8 flags for the gateway process alone (GC settings, say), on its command line. */
    "gateway-node-flags": { type: "string" },
    /** Runs the gateway under `nice -n N` (a negative N needs root): the scheduler's priority for it. */
    "gateway-nice": { type: "string" },
    /** Adds a target "burnN" per N: the bare forwarder spending N µs of CPU per request. */
    "bare-burn-us": { type: "string" },
    /** Adds a target "gw-guard": the gateway with a typical guardrail policy on its key. */
    guard: { type: "boolean", default: false },
  },
});
const rates = values.rates.split(",").map(Number);
const seconds = Math.min(Number(values.seconds), 10); // bounded: 10 s a step at most
const repeat = Math.min(Number(values.repeat), 10);
const burnsUs = values["bare-burn-us"]?.split(",").map(Number) ?? [];
if (rates.some((r) => !(r > 0)) || !(seconds > 0) || !(repeat >= 1)) throw new Error("bad --rates, --seconds or --repeat");
if (burnsUs.some((us) => !(us >= 0 && us <= 10_000))) throw new Error("bad --bare-burn-us: each 0 to 10000 µs");

const gatewayLog = join(tmpdir(), "llmgw-bench-gateway.log");
const fmt = (ms: number) => ms.toFixed(3).padStart(8);

async function main(): Promise<void> {
  const sim = await startSimProcess("sim-chat");
  const bare = values.bare ? await startBareProxy(sim.url, 0) : null;
  const burns: { name: string; proxy: BareProxy }[] = [];
  for (const us of burnsUs) burns.push({ name: `burn${us}`, proxy: await startBareProxy(sim.url, us) });
  const p = await startPlatform({ processes: [] });
  let ownGateway: { pid: number; stop(): Promise<unknown> } | undefined;
  let usageWorker: ChildProcess | undefined;
  try {
    // The gateway first (the agent registers with it). Under the profiler or with node flags of its
    // own it is our own child (node refuses --cpu-prof and most V8 flags in NODE_OPTIONS), stopped
    // before the platform so a profile is written.
    const nodeFlags = [
      ...(values["cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${values["cpu-prof"]}`] : []),
      ...(values["gateway-node-flags"]?.split(/\s+/).filter(Boolean) ?? []),
    ];
    const nice = values["gateway-nice"];
    if (nodeFlags.length || nice) {
      // After the flags the platform starts the gateway with, so that those given here override them.
      const argv = [...nodeFlagsFor(["gateway"], p.env), ...nodeFlags, LLMGW_BIN, "gateway"];
      // Its output (and what flags such as --trace-gc print) goes to a file named at the end.
      const out = fs.openSync(gatewayLog, "w");
      const [command, args] = nice ? ["nice", ["-n", nice, process.execPath, ...argv]] : [process.execPath, argv];
      const proc = spawn(command, args, { env: p.env, stdio: ["ignore", out, out] });
      fs.closeSync(out);
      const exited = new Promise((r) => proc.once("exit", r));
      ownGateway = { pid: proc.pid!, stop: () => (proc.kill("SIGTERM"), exited) };
      await waitFor("the gateway", async () => (await fetch(`${p.adminUrl}/health`)).ok, 60_000);
    } else await p.start("gateway");
    for (const name of ["worker-temporal", "worker-usage", "agent"] as const) await p.start(name);
    await waitFor("the agent to register", async () => (await p.admin<{ data: unknown[] }>("GET", "/nodes")).data.length > 0, 60_000);
    const model = uniqueModel("bench");
    if ((await p.ctl(["projects", "create", "bench"])).code !== 0) throw new Error("could not create the project");
    const created = await p.ctl(["keys", "create", "--project", "bench", "--json"]);
    if (created.code !== 0) throw new Error(created.stderr);
    const { key, id: keyId } = JSON.parse(created.stdout) as { key: string; id: string };
    // Limits on, as in production: limits far above the load, so every request is counted and none refused.
    if (values.limits) {
      const limited = await p.ctl(["keys", "limits", keyId, "--rpm", "100000000", "--tpm", "1000000000", "--concurrent", "100000"]);
      if (limited.code !== 0) throw new Error(limited.stderr);
    }
    const served = await p.ctl(["model", "serve", model, "--engine", "sim", "--replicas", "1", "--wait"]);
    if (served.code !== 0) throw new Error(served.stderr);
    const gatewayPid = ownGateway?.pid ?? p.children.get("gateway")!.proc.pid!;
    usageWorker = p.children.get("worker-usage")!.proc;
    const gatewayMetrics = `http://127.0.0.1:${p.env.LLMGW_METRICS_PORT}/metrics`;
    const loopMs = loopTimerMs(p.env);

    const targets: Target[] = [
      { name: "sim", url: sim.url, model: "sim-chat" },
      { name: "gateway", url: p.clientUrl, key, model },
    ];
    if (values.guard) targets.push({ name: "gw-guard", url: p.clientUrl, key: await addGuardKey(p, model, values.limits), model });
    if (values["ledger-paused"]) targets.push({ name: "gw-paused", url: p.clientUrl, key, model });
    if (bare) targets.push({ name: "bare", url: bare.url, model: "sim-chat" });
    for (const b of burns) targets.push({ name: b.name, url: b.proxy.url, model: "sim-chat" });
    // The very engine the gateway forwards to, straight: shows the upstream is not what is slow.
    // It demands its own key (common/engine-key.ts), as it does of the gateway.
    const shown = await p.admin<{ replicas: { id: string; url: string }[] }>("GET", `/models/${model}`);
    const replica = shown.replicas[0]!;
    targets.push({ name: "replica", url: replica.url, key: engineKey(p.env.LLMGW_CLUSTER_TOKEN!, replica.id), model });
    if (values.target) targets.push({ name: "target", url: values.target.replace(/\/v1\/?$/, ""), key: values.key, model: values.model });
    const pools = new Map(targets.map((t) => [t.name, new Pool(t.url, { connections: 256, pipelining: 1 })]));

    // Warm up: connections open, JIT settled, the key in the gateway's cache.
    for (const t of targets) await openLoop(pools.get(t.name)!, t, 500, 2);

    process.stdout.write(`load average before: ${loadAverage()}\n`);
    process.stdout.write("rate/s  target      p50 ms   p99 ms   added p50  added p99  CPU s/1000  CPU wait ms/s  steal ms/s  failed  load avg\n");
    const rows: unknown[] = [];
    const stalls = new Map<number, Stalls>();
    /** Per rate and target, the p99 of each run's first second after idle. */
    const firstSecond = new Map<string, number[]>();
    const rest = new Map<number, Map<string, number>>();
    // Each figure of every run, for the medians printed at the end when --repeat is over 1.
    const runs: Run[] = [];
    for (let run = 0; run < repeat; run++) for (const rate of rates) {
      const out = new Map<string, LoadResult>();
      const cpuPer1000 = new Map<string, number>();
      /** How long the process's main thread sat runnable waiting for a CPU, ms per second of the run. */
      const waitPerS = new Map<string, number>();
      /** CPU the host gave other guests during each target's measured seconds (load.ts stealMs), ms per second. */
      const stealPerS = new Map<string, number>();
      const pids = new Map<string, number>([["gateway", gatewayPid], ["gw-paused", gatewayPid], ["gw-guard", gatewayPid]]);
      if (bare) pids.set("bare", bare.pid);
      for (const b of burns) pids.set(b.name, b.proxy.pid);
      for (const t of targets) {
        const pid = pids.get(t.name);
        if (t.name === "gw-paused") usageWorker.kill("SIGSTOP");
        // Each target sat idle while the others ran: a second of the same load first, so what is
        // measured is the steady state (its p99 is kept: the step up from idle, printed apart).
        const fromIdle = await openLoop(pools.get(t.name)!, t, rate, 1);
        const stalls0 = t.name === "gateway" ? await loopStalls(gatewayMetrics, loopMs) : null;
        const rest0 = t.name === "gateway" ? restCpu(p.children) : null;
        const cpu0 = pid ? cpuSeconds(pid) : 0;
        const waited0 = pid ? runQueueWaitMs(pid) : 0;
        const steal0 = stealMs();
        const started = performance.now();
        const r = await openLoop(pools.get(t.name)!, t, rate, seconds);
        firstSecond.set(`${rate} ${t.name}`, [...(firstSecond.get(`${rate} ${t.name}`) ?? []), fromIdle.p99]);
        if (pid) cpuPer1000.set(t.name, ((cpuSeconds(pid) - cpu0) / r.sent) * 1000);
        if (rest0) {
          const rest1 = restCpu(p.children);
          rest.set(rate, new Map([...rest1].map(([name, s]) => [name, ((s - (rest0.get(name) ?? 0)) / r.sent) * 1000])));
        }
        if (pid) waitPerS.set(t.name, ((runQueueWaitMs(pid) - waited0) / (performance.now() - started)) * 1000);
        stealPerS.set(t.name, ((stealMs() - steal0) / (performance.now() - started)) * 1000);
        if (stalls0) stalls.set(rate, diffStalls(stalls0, await loopStalls(gatewayMetrics, loopMs)));
        if (t.name === "gw-paused") usageWorker.kill("SIGCONT");
        out.set(t.name, r);
      }
      const base = out.get("sim")!;
      const load = loadAverage();
      for (const [name, r] of out) {
        const added = name === "sim" ? "" : `${fmt(r.p50 - base.p50)}   ${fmt(r.p99 - base.p99)}`;
        const cpu = cpuPer1000.has(name) ? cpuPer1000.get(name)!.toFixed(3).padStart(11) : "".padStart(11);
        const wait = waitPerS.has(name) ? waitPerS.get(name)!.toFixed(0).padStart(13) : "".padStart(13);
        const steal = stealPerS.get(name)!;
        process.stdout.write(`${String(rate).padStart(6)}  ${name.padEnd(8)} ${fmt(r.p50)} ${fmt(r.p99)}  ${added.padEnd(21)}  ${cpu}  ${wait}  ${steal.toFixed(0).padStart(10)}  ${String(r.failed).padStart(6)}  ${load}\n`);
        rows.push({ run, rate, target: name, p50_ms: r.p50, p99_ms: r.p99, failed: r.failed, ...(cpuPer1000.has(name) ? { cpu_s_per_1000: cpuPer1000.get(name), cpu_wait_ms_per_s: waitPerS.get(name) } : {}), steal_ms_per_s: steal, load });
        runs.push({ rate, target: name, p50: r.p50, p99: r.p99, addedP50: r.p50 - base.p50, addedP99: r.p99 - base.p99, cpu: cpuPer1000.get(name), wait: waitPerS.get(name), steal });
      }
    }
    if (repeat > 1) printMedians(runs, rows);
    if (values.guard) guardRatios(runs, rows);
    // Where the gateway's p99 comes from: its own event loop held up (GC, long tasks) or not.
    const lastRun = repeat > 1 ? " (the last of the runs)" : "";
    process.stdout.write(`\ngateway process during each run${lastRun}: event-loop delay max / p99 (ms past the ${loopMs} ms timer), GC pauses (count, total ms)\n`);
    for (const [rate, st] of stalls) {
      process.stdout.write(`${String(rate).padStart(6)}  loop max ${st.loopMaxMs.toFixed(1)}  p99 ${st.loopP99Ms.toFixed(1)}  GC ${st.gcCount} pauses, ${st.gcMs.toFixed(1)} ms (minor ${st.minorCount}, ${st.minorMs.toFixed(1)} ms)\n`);
      rows.push({ rate, target: "gateway-process", loop_max_ms: st.loopMaxMs, loop_p99_ms: st.loopP99Ms, gc_pauses: st.gcCount, gc_ms: st.gcMs, minor_gc_pauses: st.minorCount, minor_gc_ms: st.minorMs });
    }
    // The step up from idle: each target's first second of a rate after sitting idle (not in the figures above).
    process.stdout.write(`\nfirst second of each rate after idle (warm-up, not measured above): p99 ms of each run\n`);
    for (const [k, p99s] of firstSecond) {
      const [rate, target] = k.split(" ");
      process.stdout.write(`${rate!.padStart(6)}  ${target!.padEnd(8)} ${p99s.map((x) => x.toFixed(2)).join(" ")}\n`);
      rows.push({ rate: Number(rate), target, first_second_p99_ms: p99s });
    }
    // The rest of the platform works for each request too (usage worker and ledger inserts, Redis),
    // on the same cores: what it used during the gateway's run.
    process.stdout.write(`\nthe rest of the platform during the gateway's run${lastRun}: CPU s per 1000 requests\n`);
    for (const [rate, byName] of rest) {
      process.stdout.write(`${String(rate).padStart(6)}  ${[...byName].map(([n, v]) => `${n} ${v.toFixed(3)}`).join("  ")}\n`);
      rows.push({ rate, target: "platform-rest", ...Object.fromEntries([...byName].map(([n, v]) => [`${n}_cpu_s_per_1000`, v])) });
    }
    if (ownGateway) process.stdout.write(`\nthe gateway's output: ${gatewayLog}\n`);
    process.stdout.write(JSON.stringify(rows) + "\n");
    await Promise.all([...pools.values()].map((pool) => pool.close()));
  } finally {
    usageWorker?.kill("SIGCONT"); // never left stopped by a run that failed
    await ownGateway?.stop();
    await p.stop();
    await bare?.stop();
    for (const b of burns) await b.proxy.stop();
    await sim.stop();
  }
}

type BareProxy = { pid: number; url: string; stop(): Promise<unknown> };

async function startBareProxy(upstream: string, burnUs: number): Promise<BareProxy> {
  const proc = spawn(process.execPath, ["--import", "tsx", join(repoRoot, "tests", "bench", "bare-proxy.ts"), upstream, String(burnUs)], { cwd: repoRoot, stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise((r) => proc.once("exit", r));
  const port = await new Promise<number>((resolve, reject) => {
    proc.once("exit", (code) => reject(new Error(`bare proxy exited with ${code}`)));
    createInterface({ input: proc.stdout! }).once("line", (line) => resolve(Number(line)));
  });
  return { pid: proc.pid!, url: `http://127.0.0.1:${port}`, stop: () => (proc.kill("SIGTERM"), exited) };
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});

const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** Per rate and target, the median over the runs of each figure (one machine's noise averages out). */
export type Run = { rate: number; target: string; p50: number; p99: number; addedP50: number; addedP99: number; cpu: number | undefined; wait: number | undefined; steal: number };

function printMedians(runs: Run[], rows: unknown[]): void {
  process.stdout.write(`\nmedians of ${repeat} runs\nrate/s  target      p50 ms   p99 ms   added p50  added p99  CPU s/1000  CPU wait ms/s  steal ms/s  added p99 of each run\n`);
  const keys = [...new Set(runs.map((r) => `${r.rate} ${r.target}`))];
  for (const k of keys) {
    const of = runs.filter((r) => `${r.rate} ${r.target}` === k);
    const { rate, target } = of[0]!;
    const m = (f: (r: (typeof of)[number]) => number) => median(of.map(f));
    const cpus = of.flatMap((r) => (r.cpu === undefined ? [] : [r.cpu]));
    const waits = of.flatMap((r) => (r.wait === undefined ? [] : [r.wait]));
    const added = target === "sim" ? "".padEnd(21) : `${fmt(m((r) => r.addedP50))}   ${fmt(m((r) => r.addedP99))}`;
    const each = target === "sim" ? "" : of.map((r) => r.addedP99.toFixed(1)).join(" ");
    process.stdout.write(`${String(rate).padStart(6)}  ${target.padEnd(8)} ${fmt(m((r) => r.p50))} ${fmt(m((r) => r.p99))}  ${added}  ${(cpus.length ? median(cpus).toFixed(3) : "").padStart(10)}  ${(waits.length ? median(waits).toFixed(0) : "").padStart(13)}  ${m((r) => r.steal).toFixed(0).padStart(10)}  ${each}\n`);
    rows.push({ median_of: of.length, rate, target, p50_ms: m((r) => r.p50), p99_ms: m((r) => r.p99), added_p50_ms: m((r) => r.addedP50), added_p99_ms: m((r) => r.addedP99), ...(cpus.length ? { cpu_s_per_1000: median(cpus), cpu_wait_ms_per_s: median(waits) } : {}), steal_ms_per_s: m((r) => r.steal) });
  }
}

/** CPU seconds so far of the platform's processes other than the gateway, and of PostgreSQL and Redis. */
function restCpu(children: Map<string, { proc: { pid?: number } }>): Map<string, number> {
  const out = new Map<string, number>();
  const add = (name: string, pid: number) => {
    try {
      out.set(name, (out.get(name) ?? 0) + cpuSeconds(pid));
    } catch {
      // exited meanwhile
    }
  };
  for (const [name, child] of children) if (name !== "gateway" && child.proc.pid) add(name, child.proc.pid);
  for (const [name, comm] of [["postgres", "postgres"], ["redis", "redis-server"]] as const) {
    const pids = spawnSync("pgrep", ["-x", comm], { encoding: "utf8" }).stdout.split("\n").filter(Boolean).map(Number);
    for (const pid of pids) add(name, pid);
  }
  return out;
}

/** The gateway's event-loop monitor resolution (common/metrics-server.ts), from the env it was started with. */
const loopTimerMs = (env: NodeJS.ProcessEnv) => loadConfig(env).LLMGW_LOOP_MONITOR_MS;

interface Stalls {
  loopMaxMs: number;
  loopP99Ms: number;
  gcCount: number;
  gcMs: number;
  /** Of those, scavenges of the young generation. */
  minorCount: number;
  minorMs: number;
}

/**
 * The gateway's own event-loop delay and GC from its /metrics (prom-client's default metrics):
 * reading it also resets the loop-delay histogram, so the next read covers just the run between.
 */
async function loopStalls(url: string, timerMs: number): Promise<Stalls> {
  const text = await (await fetch(url)).text();
  const value = (re: RegExp) => text.split("\n").filter((l) => re.test(l)).reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(" ") + 1)), 0);
  return {
    // prom-client's figures are the whole interval of node's loop timer: the delay is past that.
    loopMaxMs: Math.max(0, value(/^\w*nodejs_eventloop_lag_max_seconds /) * 1000 - timerMs),
    loopP99Ms: Math.max(0, value(/^\w*nodejs_eventloop_lag_p99_seconds /) * 1000 - timerMs),
    gcCount: value(/^\w*nodejs_gc_duration_seconds_count\{/),
    gcMs: value(/^\w*nodejs_gc_duration_seconds_sum\{/) * 1000,
    minorCount: value(/^\w*nodejs_gc_duration_seconds_count\{kind="minor"/),
    minorMs: value(/^\w*nodejs_gc_duration_seconds_sum\{kind="minor"/) * 1000,
  };
}

/** Loop figures are the second read's (the first reset them); GC counts are cumulative. */
const diffStalls = (a: Stalls, b: Stalls): Stalls => ({
  loopMaxMs: b.loopMaxMs,
  loopP99Ms: b.loopP99Ms,
  gcCount: b.gcCount - a.gcCount,
  gcMs: b.gcMs - a.gcMs,
  minorCount: b.minorCount - a.minorCount,
  minorMs: b.minorMs - a.minorMs,
});
