// Runs test files in parallel lanes (scripts/test.sh, for the whole suite). The tests spend much of
// their time waiting on engines, workflows and timers, so two lanes use a 2-core machine's idle CPU.
// Each lane has its own Redis database and test database, emptied here; every platform a test starts
// already has its own task queue, ports and store, and a test that takes a service down stages it on
// one of its own (tests/helpers/postgres.ts, temporal.ts). Files that share one outside system
// (tests/lanes.json "together", e.g. the host's Slurm node) run one after the other in one lane.
// Each file's output is printed whole when it ends, then a summary of every file.
//
//   node --import tsx scripts/test-lanes.ts [--lanes N] [node --test flags] FILE...
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { redis } from "../common/redis.ts";

const root = path.resolve(import.meta.dirname, "..");
const plan = z
  .object({
    together: z.array(z.array(z.string())),
    /** Each file's measured seconds (the summary prints them): the longest start first, so no lane ends with a long one alone. */
    seconds: z.record(z.string(), z.number()),
  })
  .parse(JSON.parse(fs.readFileSync(path.join(root, "tests/lanes.json"), "utf8")));

interface Result {
  file: string;
  lane: number;
  seconds: number;
  code: number | null;
  pass: number;
  fail: number;
  /** A failed file's failures: each `not ok` line with the first line of its error. */
  why: string[];
}

function parseArgs(argv: string[]): { lanes: number; flags: string[]; files: string[] } {
  let lanes = 2;
  const flags: string[] = [];
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--lanes") lanes = Number(argv[++i]);
    else if (a.startsWith("-")) flags.push(a);
    else files.push(path.relative(root, path.resolve(a)));
  }
  if (!Number.isInteger(lanes) || lanes < 1) throw new Error(`--lanes: a whole number ≥ 1, not ${lanes}`);
  return { lanes, flags, files };
}

/** Lane 1 uses the environment's Redis database and test database; lane k the k−1 next Redis databases and llmgw_test_k. */
function laneEnv(lane: number, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (lane === 1) return env;
  const r = new URL(env.REDIS_URL!);
  r.pathname = `/${Number(r.pathname.slice(1) || 0) + lane - 1}`;
  const d = new URL(env.DATABASE_URL!);
  d.pathname = `${d.pathname}_${lane}`;
  return { ...env, REDIS_URL: r.toString(), DATABASE_URL: d.toString() };
}

/** A fresh test database (scripts/services.sh createdb) and an empty Redis database for each lane after the first (test.sh readies lane 1's). */
async function prepareLanes(lanes: number): Promise<void> {
  for (let k = 2; k <= lanes; k++) {
    const env = laneEnv(k, process.env);
    execFileSync("bash", [path.join(root, "scripts/services.sh"), "createdb", new URL(env.DATABASE_URL!).pathname.slice(1)], { stdio: ["ignore", "ignore", "inherit"] });
    const r = redis(env.REDIS_URL);
    await r.flushdb();
    r.disconnect();
  }
}

const running = new Set<ChildProcess>();

/**
 * Kills what a test file left running: a file cut off by its timeout skips its after() hooks, and a
 * platform left behind keeps consuming the lane's Redis queues (its usage worker took the next
 * file's usage events). Each file runs with a mark in its environment, which the processes it
 * starts inherit; those still alive once it has ended are found by it in /proc and killed.
 */
function reapLeftovers(mark: string): number {
  let killed = 0;
  for (const pid of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (!fs.readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(`TEST_LANE_RUN=${mark}`)) continue;
      process.kill(Number(pid), "SIGKILL");
      killed++;
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return killed;
}

/** Each `not ok` of a file's TAP with the first line of its error, for the digest the run ends with. */
function failures(out: string): string[] {
  const lines = out.split("\n");
  const why: string[] = [];
  lines.forEach((l, i) => {
    const m = l.match(/^\s*not ok \d+ - (.*)$/);
    if (!m) return;
    const j = lines.findIndex((x, k) => k > i && k < i + 40 && /^\s+error: /.test(x));
    // A multi-line error (`error: |-`) says it on the next line.
    const err = j < 0 ? "" : lines[j]!.trim().endsWith("|-") ? (lines[j + 1] ?? "") : lines[j]!;
    if (/^'\d+ subtests? failed'$/.test(err.trim().replace(/^error: /, ""))) return; // a suite: its failed tests are listed
    why.push(`  ${m[1]!.slice(0, 120)}: ${err.replace(/^\s*(error: )?/, "").slice(0, 200)}`);
  });
  return why.length ? why.slice(0, 12) : ["  (no test failed: the file itself exited non-zero; its output is above)"];
}

function runFile(file: string, lane: number, flags: string[]): Promise<Result> {
  const t0 = performance.now();
  const mark = randomUUID();
  const child = spawn(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=1", "--test-timeout=600000", ...flags, file], {
    cwd: root,
    env: { ...laneEnv(lane, process.env), TEST_LANE_RUN: mark },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  const chunks: Buffer[] = [];
  child.stdout.on("data", (b: Buffer) => chunks.push(b));
  child.stderr.on("data", (b: Buffer) => chunks.push(b));
  return new Promise((resolve) => {
    child.on("close", (code) => {
      running.delete(child);
      const left = reapLeftovers(mark);
      if (left) chunks.push(Buffer.from(`# ${left} process(es) the file left running were killed\n`));
      const out = Buffer.concat(chunks).toString("utf8");
      const seconds = (performance.now() - t0) / 1000;
      const count = (what: string) => Number(out.match(new RegExp(`^# ${what} (\\d+)$`, "m"))?.[1] ?? 0);
      const r: Result = { file, lane, seconds, code, pass: count("pass"), fail: count("fail"), why: code === 0 ? [] : failures(out) };
      process.stdout.write(`\n──── ${file} (lane ${lane}, ${seconds.toFixed(1)} s, exit ${code}) ────\n${out}`);
      resolve(r);
    });
  });
}

async function main(): Promise<number> {
  const { lanes, flags, files } = parseArgs(process.argv.slice(2));
  for (const v of ["REDIS_URL", "DATABASE_URL"]) if (!process.env[v]) throw new Error(`${v} must be set (scripts/test.sh sets it)`);
  await prepareLanes(lanes);
  const weight = (unit: string[]) => unit.reduce((s, f) => s + (plan.seconds[f] ?? 10), 0);

  const chosen = new Set(files);
  const grouped = plan.together.map((g) => g.filter((f) => chosen.has(f))).filter((g) => g.length > 0);
  const inGroup = new Set(grouped.flat());
  const units = [...grouped, ...files.filter((f) => !inGroup.has(f)).map((f) => [f])];
  units.sort((a, b) => weight(b) - weight(a));

  console.log(`${files.length} files: ${units.length} units in ${lanes} lanes`);
  const results: Result[] = [];
  const lane = async (n: number) => {
    for (let unit = units.shift(); unit; unit = units.shift()) for (const f of unit) results.push(await runFile(f, n, flags));
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: lanes }, (_, i) => lane(i + 1)));
  const wall = (performance.now() - t0) / 1000;

  const failed = results.filter((r) => r.code !== 0);
  console.log(`\n──── summary: ${files.length} files in ${wall.toFixed(0)} s (${lanes} lanes); the files' own times sum to ${results.reduce((s, r) => s + r.seconds, 0).toFixed(0)} s ────`);
  for (const r of [...results].sort((a, b) => b.seconds - a.seconds)) {
    console.log(`${r.code === 0 ? "ok  " : "FAIL"} ${r.seconds.toFixed(1).padStart(6)} s  lane ${r.lane}  pass ${r.pass} fail ${r.fail}  ${r.file}`);
  }
  console.log("\n──── the ten slowest files ────");
  for (const r of [...results].sort((a, b) => b.seconds - a.seconds).slice(0, 10)) console.log(`${r.seconds.toFixed(1).padStart(6)} s  ${r.file}`);
  const pass = results.reduce((s, r) => s + r.pass, 0);
  const fail = results.reduce((s, r) => s + r.fail, 0);
  // Last, so the end of a long log says why: each failed file's failures and their errors' first lines.
  if (failed.length) console.log("\n──── why ────");
  for (const r of failed) console.log(`${r.file} (exit ${r.code}, ${r.seconds.toFixed(0)} s)\n${r.why.join("\n")}`);
  console.log(`# tests ${pass + fail}\n# pass ${pass}\n# fail ${fail}\n# files failed ${failed.length}${failed.length ? `: ${failed.map((r) => r.file).join(", ")}` : ""}`);
  return failed.length ? 1 : 0;
}

for (const [sig, status] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
  process.on(sig, () => {
    for (const c of running) c.kill(sig);
    process.exit(status);
  });
}

process.exit(await main());
