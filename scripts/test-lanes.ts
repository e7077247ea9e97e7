// Runs test files in parallel lanes (scripts/test.sh, for the whole suite). The tests spend much of
// their time waiting on engines, workflows and timers, so two lanes use a 2-core machine's idle CPU.
// Each lane has its own Redis database and test database; every platform a test starts already has
// its own task queue, ports and store; a test that takes a service down stages it on one of its own
// (tests/helpers/postgres.ts, temporal.ts). A file that must take a shared service down would be
// listed in tests/lanes.json "solo": those run after the lanes, one at a time. Files that share one
// outside system ("together", e.g. the host's Slurm node) run one after the other in one lane.
// Each file's output is printed whole when it ends, then a summary of every file.
//
//   node --import tsx scripts/test-lanes.ts [--lanes N] [node --test flags] FILE...
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";

const root = path.resolve(import.meta.dirname, "..");
const plan = z
  .object({
    solo: z.array(z.string()),
    together: z.array(z.array(z.string())),
    /** Each file's last measured seconds: the longest start first, so no lane ends with a long one alone. */
    seconds: z.record(z.string(), z.number()),
  })
  .parse(JSON.parse(fs.readFileSync(path.join(root, "tests/lanes.json"), "utf8")));
const measuredFile = path.join(root, ".data/test-durations.json");

interface Result {
  file: string;
  lane: number;
  seconds: number;
  code: number | null;
  pass: number;
  fail: number;
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

/** The lane's Redis database (the base URL's, then the next ones) and test database (llmgw_test, llmgw_test_2, ...). */
function laneEnv(lane: number, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env, LLMGW_TEST_LANE: String(lane) };
  if (lane === 1) return out;
  const r = new URL(env.REDIS_URL ?? "redis://127.0.0.1:6380/1");
  r.pathname = `/${Number(r.pathname.slice(1) || 0) + lane - 1}`;
  const d = new URL(env.DATABASE_URL ?? "postgresql://llmgw@127.0.0.1:5433/llmgw_test");
  d.pathname = `${d.pathname}_${lane}`;
  return { ...out, REDIS_URL: r.toString(), DATABASE_URL: d.toString() };
}

const running = new Set<ChildProcess>();

function runFile(file: string, lane: number, flags: string[]): Promise<Result> {
  const t0 = performance.now();
  const child = spawn(process.execPath, ["--import", "tsx", "--test", "--test-concurrency=1", "--test-timeout=600000", ...flags, file], {
    cwd: root,
    env: laneEnv(lane, process.env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  const chunks: Buffer[] = [];
  child.stdout.on("data", (b: Buffer) => chunks.push(b));
  child.stderr.on("data", (b: Buffer) => chunks.push(b));
  return new Promise((resolve) => {
    child.on("close", (code) => {
      running.delete(child);
      const out = Buffer.concat(chunks).toString("utf8");
      const seconds = (performance.now() - t0) / 1000;
      const count = (what: string) => Number(out.match(new RegExp(`^# ${what} (\\d+)$`, "m"))?.[1] ?? 0);
      const r: Result = { file, lane, seconds, code, pass: count("pass"), fail: count("fail") };
      process.stdout.write(`\n──── ${file} (lane ${lane}, ${seconds.toFixed(1)} s, exit ${code}) ────\n${out}`);
      resolve(r);
    });
  });
}

async function main(): Promise<number> {
  const { lanes, flags, files } = parseArgs(process.argv.slice(2));
  const measured: Record<string, number> = fs.existsSync(measuredFile) ? JSON.parse(fs.readFileSync(measuredFile, "utf8")) : {};
  const weight = (f: string) => measured[f] ?? plan.seconds[f] ?? 10;

  const chosen = new Set(files);
  const solo = plan.solo.filter((f) => chosen.has(f));
  const grouped = plan.together.map((g) => g.filter((f) => chosen.has(f))).filter((g) => g.length > 0);
  const inGroup = new Set(grouped.flat());
  const units = [...grouped, ...files.filter((f) => !inGroup.has(f) && !solo.includes(f)).map((f) => [f])];
  units.sort((a, b) => b.reduce((s, f) => s + weight(f), 0) - a.reduce((s, f) => s + weight(f), 0));

  console.log(`${files.length} files: ${units.length} units in ${lanes} lanes, then ${solo.length} alone`);
  const results: Result[] = [];
  const lane = async (n: number) => {
    for (let unit = units.shift(); unit; unit = units.shift()) for (const f of unit) results.push(await runFile(f, n, flags));
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: lanes }, (_, i) => lane(i + 1)));
  for (const f of solo) results.push(await runFile(f, 1, flags));
  const wall = (performance.now() - t0) / 1000;

  fs.mkdirSync(path.dirname(measuredFile), { recursive: true });
  fs.writeFileSync(measuredFile, JSON.stringify({ ...measured, ...Object.fromEntries(results.map((r) => [r.file, Math.round(r.seconds)])) }, null, 2) + "\n");

  const failed = results.filter((r) => r.code !== 0);
  console.log(`\n──── summary: ${files.length} files in ${wall.toFixed(0)} s (${lanes} lanes); the files' own times sum to ${results.reduce((s, r) => s + r.seconds, 0).toFixed(0)} s ────`);
  for (const r of [...results].sort((a, b) => b.seconds - a.seconds)) {
    console.log(`${r.code === 0 ? "ok  " : "FAIL"} ${r.seconds.toFixed(1).padStart(6)} s  lane ${r.lane}  pass ${r.pass} fail ${r.fail}  ${r.file}`);
  }
  const pass = results.reduce((s, r) => s + r.pass, 0);
  const fail = results.reduce((s, r) => s + r.fail, 0);
  console.log(`# tests ${pass + fail}\n# pass ${pass}\n# fail ${fail}\n# files failed ${failed.length}${failed.length ? `: ${failed.map((r) => r.file).join(", ")}` : ""}`);
  return failed.length ? 1 : 0;
}

for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    for (const c of running) c.kill(sig);
    process.exit(130);
  });
}

process.exit(await main());
