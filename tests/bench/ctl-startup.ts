// Benchmark of a ctl command's start (not part of the test suite):
//   npm run build && node --import tsx tests/bench/ctl-startup.ts [--runs 11] [--goal-ms 300]
//     [--admin-url URL --token T] [--baseline DIR]
// Runs `llmgw ctl models --json` (bin/llmgw.js, as an operator does) --runs times each from the
// compiled build (dist/) and from the sources through tsx (LLMGW_FROM_SOURCE=1), interleaved so
// that both see the same machine, beside bare `node -e ""` (the floor). Prints the median wall time
// and CPU (user + system, from this process's reaped children in /proc/self/stat) of each, and the
// machine's idle and steal over the run (/proc/stat). By default the admin API is a stand-in on
// loopback answering three models; --admin-url and --token point it at a running platform.
// --baseline DIR adds another llmgw's compiled build to the same interleaved runs, for a before and
// after side by side: DIR is a copy of the older code with its dist/ built and fresh (so its start
// pays bin/dist.js's check too), e.g. with the older build in dist/:
//   git archive OLD | tar -x -C /tmp/before; cp -r dist /tmp/before; touch /tmp/before/dist/.built
//   ln -s "$PWD/node_modules" /tmp/before/
// Exits 1 when the compiled build's median wall time is over --goal-ms.
import { spawn, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { distFresh } from "../../bin/dist.js";
import { REPO_ROOT, repoPath } from "../../common/code-paths.ts";

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
}
const runs = Math.max(1, Math.min(Number(flag("--runs") ?? 11), 51));
const goalMs = Number(flag("--goal-ms") ?? 300);

const clkTck = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** CPU seconds of this process's children that have exited and been reaped (cutime + cstime). */
function childrenCpuS(): number {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[13]) + Number(fields[14])) / clkTck;
}

/** The machine's CPU counters (/proc/stat's first line): user nice system idle iowait irq softirq steal. */
function cpuTicks(): number[] {
  return readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
}

/** A stand-in admin API: GET /api/v1/models with three models, as the gateway would list them. */
async function standInAdmin(): Promise<{ url: string; close(): void }> {
  const models = ["chat-a", "chat-b", "embed"].map((name, i) => ({
    name,
    ready: 1 + i,
    versions: [{ version: "v1", engine: "sim" }],
    replicas: Array.from({ length: 1 + i }, (_, r) => ({ id: `${name}-${r}`, node: "node-1", state: "ready", url: `http://127.0.0.1:${18000 + r}` })),
  }));
  const server = http.createServer((req, res) => {
    const ok = req.url === "/api/v1/models" && req.headers.authorization === "Bearer bench-token";
    res.writeHead(ok ? 200 : 404, { "content-type": "application/json" });
    res.end(JSON.stringify(ok ? { data: models } : { error: { message: "not found" } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

interface Variant {
  name: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  wallMs: number[];
  cpuMs: number[];
}

async function runOnce(v: Variant): Promise<void> {
  const cpu0 = childrenCpuS();
  const t0 = performance.now();
  const child = spawn(process.execPath, v.args, { cwd: REPO_ROOT, env: v.env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  v.wallMs.push(performance.now() - t0);
  v.cpuMs.push((childrenCpuS() - cpu0) * 1000);
  if (code !== 0) throw new Error(`${v.name}: exit ${code}: ${out.trim()}`);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<number> {
  if (!distFresh(REPO_ROOT)) {
    process.stderr.write("dist/ is missing or older than the sources: run `npm run build` first\n");
    return 2;
  }
  const given = flag("--admin-url");
  const admin = given ? null : await standInAdmin();
  const base: NodeJS.ProcessEnv = { ...process.env, LLMGW_ADMIN_URL: given ?? admin!.url, LLMGW_ADMIN_TOKEN: given ? flag("--token") : "bench-token" };
  delete base.LLMGW_FROM_SOURCE;
  const ctl = [repoPath("bin", "llmgw.js"), "ctl", "models", "--json"];
  const variants: Variant[] = [
    { name: "node -e '' (the floor)", args: ["-e", ""], env: base, wallMs: [], cpuMs: [] },
    { name: "ctl models --json, dist/", args: ctl, env: base, wallMs: [], cpuMs: [] },
    { name: "ctl models --json, sources (tsx)", args: ctl, env: { ...base, LLMGW_FROM_SOURCE: "1" }, wallMs: [], cpuMs: [] },
  ];
  const baseline = flag("--baseline");
  if (baseline) variants.push({ name: "ctl models --json, --baseline dist/", args: [path.resolve(baseline, "bin", "llmgw.js"), "ctl", "models", "--json"], env: base, wallMs: [], cpuMs: [] });
  try {
    for (const v of variants) await runOnce(v); // warm the file cache; not counted
    for (const v of variants) v.wallMs.length = v.cpuMs.length = 0;
    const ticks0 = cpuTicks();
    for (let i = 0; i < runs; i++) for (const v of variants) await runOnce(v);
    const d = cpuTicks().map((t, i) => t - ticks0[i]!);
    const total = d.reduce((a, b) => a + b, 0) || 1;

    process.stdout.write(`${runs} runs each, interleaved; load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}; ` +
      `machine over the run: ${((100 * d[3]!) / total).toFixed(0)}% idle, ${((100 * d[7]!) / total).toFixed(1)}% steal\n`);
    process.stdout.write(`what${" ".repeat(34)}median wall ms  median CPU ms  min wall ms\n`);
    for (const v of variants) {
      process.stdout.write(`${v.name.padEnd(38)}${median(v.wallMs).toFixed(0).padStart(14)}${median(v.cpuMs).toFixed(0).padStart(15)}${Math.min(...v.wallMs).toFixed(0).padStart(13)}\n`);
    }
    const dist = median(variants[1]!.wallMs);
    process.stdout.write(`goal: dist/ under ${goalMs} ms wall: ${dist <= goalMs ? "met" : "NOT met"} (${dist.toFixed(0)} ms)\n`);
    return dist <= goalMs ? 0 : 1;
  } finally {
    admin?.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  },
);
