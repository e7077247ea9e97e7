// Benchmark of the sim engine (not part of the test suite):
//   node --import tsx tests/bench/sim.ts [--connections 32] [--requests 100000] [--duration 10]
//     [--warmup 1] [--min-rps 5000] [--max-tokens 16] [--stream]
// Starts the sim as a child process (so the load generator does not share its event loop), drives
// it over loopback with keep-alive connections (an undici Pool) for a bounded number of requests
// and seconds, and prints requests/second, p50/p99 latency and the sim's CPU seconds per 1,000
// requests (from /proc/<pid>/stat). Exits 1 when requests/second falls short of --min-rps.
import { spawn, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { Pool } from "undici";
import { moduleArgs } from "../../common/code-paths.ts";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

function flag(name: string, def: number): number {
  const i = process.argv.indexOf(name);
  if (i < 0) return def;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v < 0) {
    process.stderr.write(`bad ${name}\n`);
    process.exit(2);
  }
  return v;
}
const connections = flag("--connections", 32);
const maxRequests = flag("--requests", 100_000);
const durationS = Math.min(flag("--duration", 10), 10); // bounded: 10 s at most
const warmupS = Math.min(flag("--warmup", 1), 5);
const minRps = flag("--min-rps", 5000);
const maxTokens = flag("--max-tokens", 16);
const stream = process.argv.includes("--stream");

const HOST = "127.0.0.1"; // loopback only

const clkTck = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of a process, in seconds. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / clkTck;
}

async function startChild(): Promise<{ pid: number; port: number; stop(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    [
      // The compiled build when it is up to date, as production runs it (bin/dist.js).
      ...moduleArgs(repoRoot, "agent/engines/sim/main.ts"),
      "--port",
      "0",
      "--host",
      HOST,
      "--model",
      "sim-chat",
    ],
    { cwd: repoRoot, stdio: ["ignore", "inherit", "pipe"], env: { ...process.env, LLMGW_LOG_LEVEL: "info" } },
  );
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const port = await new Promise<number>((resolvePort, reject) => {
    const timer = setTimeout(() => reject(new Error("sim did not start within 30 s")), 30_000);
    child.once("exit", (code) => reject(new Error(`sim exited with ${code}`)));
    const rl = createInterface({ input: child.stderr! });
    rl.on("line", (line) => {
      try {
        const j = JSON.parse(line) as { msg?: string; port?: number };
        if (j.msg === "sim engine listening" && typeof j.port === "number") {
          clearTimeout(timer);
          resolvePort(j.port);
        }
      } catch {
        process.stderr.write(line + "\n");
      }
    });
  });
  return {
    pid: child.pid!,
    port,
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

function pct(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function main(): Promise<void> {
  const sim = await startChild();
  const pool = new Pool(`http://${HOST}:${sim.port}`, { connections, pipelining: 1 });
  const bodies = Array.from({ length: 64 }, (_, i) =>
    JSON.stringify({
      model: "sim-chat",
      messages: [{ role: "user", content: `Say hello in five words, please (${i}).` }],
      max_tokens: maxTokens,
      seed: i,
      stream,
    }),
  );
  const headers = { "content-type": "application/json" };

  let failures = 0;
  async function drive(untilMs: number, limit: number, lat: Float64Array | null): Promise<number> {
    let issued = 0;
    let done = 0;
    async function worker(): Promise<void> {
      while (issued < limit && performance.now() < untilMs) {
        const i = issued++;
        const t0 = performance.now();
        const r = await pool.request({
          origin: `http://${HOST}:${sim.port}`,
          path: "/v1/chat/completions",
          method: "POST",
          headers,
          body: bodies[i & 63],
        });
        await r.body.text();
        if (r.statusCode !== 200) failures++;
        if (lat !== null) lat[done] = performance.now() - t0;
        done++;
      }
    }
    await Promise.all(Array.from({ length: connections }, worker));
    return done;
  }

  // Warm up: connections open, both processes' JIT settled.
  await drive(performance.now() + warmupS * 1000, Number.MAX_SAFE_INTEGER, null);
  failures = 0;

  const lat = new Float64Array(maxRequests);
  const cpu0 = cpuSeconds(sim.pid);
  const t0 = performance.now();
  const done = await drive(t0 + durationS * 1000, maxRequests, lat);
  const elapsed = (performance.now() - t0) / 1000;
  const cpu1 = cpuSeconds(sim.pid);

  await pool.close();
  await sim.stop();

  const sorted = lat.slice(0, done).sort();
  const rps = done / elapsed;
  const result = {
    requests: done,
    failures,
    seconds: Number(elapsed.toFixed(3)),
    connections,
    stream,
    max_tokens: maxTokens,
    rps: Math.round(rps),
    p50_ms: Number(pct(sorted, 50).toFixed(3)),
    p99_ms: Number(pct(sorted, 99).toFixed(3)),
    sim_cpu_s_per_1000: Number((((cpu1 - cpu0) / done) * 1000).toFixed(4)),
  };
  process.stdout.write(
    `sim bench: ${result.requests} requests in ${result.seconds} s over ${connections} keep-alive connections` +
      `${stream ? " (streamed)" : ""}\n` +
      `  ${result.rps} req/s, p50 ${result.p50_ms} ms, p99 ${result.p99_ms} ms, ` +
      `sim CPU ${result.sim_cpu_s_per_1000} s per 1000 requests, ${failures} failures\n` +
      JSON.stringify(result) +
      "\n",
  );
  if (failures > 0 || (minRps > 0 && rps < minRps)) {
    process.stdout.write(`FAIL: wanted at least ${minRps} req/s with no failures\n`);
    process.exitCode = 1;
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
