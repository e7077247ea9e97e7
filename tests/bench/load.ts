// Shared pieces of the benchmarks: an open-loop load driver over undici, percentiles, and a
// process's CPU seconds from /proc. Loopback only; every run is bounded in time.
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Pool } from "undici";
import { moduleArgs } from "../../common/code-paths.ts";

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

const clkTck = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of a process, in seconds. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / clkTck;
}

/** How long a process's main thread has waited, runnable, for a CPU (ms; /proc/<pid>/schedstat). */
export function runQueueWaitMs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[1]) / 1e6;
}

/**
 * CPU time the hypervisor gave to other guests while this VM's CPUs wanted it (the `steal` of
 * /proc/stat, all CPUs together), ms so far. A run with much of it was measured on a host that
 * took the cores away, whatever the target.
 */
export function stealMs(): number {
  const cpu = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/);
  return (Number(cpu[8] ?? 0) * 1000) / clkTck;
}

export function loadAverage(): string {
  return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
}

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** Starts a sim engine as its own process on a free loopback port. */
export async function startSimProcess(model: string, extra: string[] = []): Promise<{ pid: number; url: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [...moduleArgs(repoRoot, "agent/engines/sim/main.ts"), "--port", "0", "--host", "127.0.0.1", "--model", model, ...extra], {
    cwd: repoRoot,
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("sim did not start within 30 s")), 30_000);
    child.once("exit", (code) => reject(new Error(`sim exited with ${code}`)));
    createInterface({ input: child.stderr! }).on("line", (line) => {
      try {
        const j = JSON.parse(line) as { msg?: string; port?: number };
        if (j.msg === "sim engine listening" && typeof j.port === "number") {
          clearTimeout(timer);
          resolve(j.port);
        }
      } catch {
        // not a log line of ours
      }
    });
  });
  return {
    pid: child.pid!,
    url: `http://127.0.0.1:${port}`,
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

export interface Target {
  name: string;
  /** Base URL without /v1. */
  url: string;
  key?: string;
  model: string;
}

export interface LoadResult {
  sent: number;
  ok: number;
  failed: number;
  p50: number;
  p99: number;
}

/**
 * Open loop: request i is sent at start + i/rate (to the next millisecond tick) whatever happened
 * to earlier ones, so a slow server cannot slow the load down and hide its queue. Latency counts
 * from the send, so the driver's own timer lateness is not blamed on the server.
 */
export async function openLoop(pool: Pool, t: Target, rate: number, seconds: number, maxTokens = 8): Promise<LoadResult> {
  const total = Math.round(rate * seconds);
  const lat = new Float64Array(total);
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (t.key) headers.authorization = `Bearer ${t.key}`;
  const bodies = Array.from({ length: 64 }, (_, i) =>
    JSON.stringify({ model: t.model, messages: [{ role: "user", content: `Say hello in five words, please (${i}).` }], max_tokens: maxTokens, seed: i }),
  );
  let ok = 0;
  let failed = 0;
  let done = 0;
  let sent = 0;
  const start = performance.now();
  await new Promise<void>((resolveAll) => {
    const one = (i: number) => {
      const t0 = performance.now();
      pool.request({ path: "/v1/chat/completions", method: "POST", headers, body: bodies[i & 63] }).then(
        async (r) => {
          await r.body.text();
          if (r.statusCode === 200) ok++;
          else failed++;
        },
        () => void failed++,
      ).finally(() => {
        lat[i] = performance.now() - t0;
        if (++done === total) resolveAll();
      });
    };
    const tick = () => {
      const now = performance.now();
      while (sent < total && start + (sent * 1000) / rate <= now) {
        one(sent);
        sent++;
      }
      // A 1 ms timer, not setImmediate: a spinning driver would take a core from the servers.
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  const sorted = lat.slice(0, done).sort();
  return { sent, ok, failed, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}
