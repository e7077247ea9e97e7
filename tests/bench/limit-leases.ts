// What the limiter costs Redis (not part of the test suite):
//   node --import tsx tests/bench/limit-leases.ts [--requests 4000] [--rate 1000]   (needs REDIS_URL)
// Drives one gateway's Limiter (gateway/auth/limiter.ts) on the real Redis with a key whose limits
// are far above the load, at a fixed rate, each request released a millisecond after it was admitted.
// Six cases side by side: concurrency limited at one scope (the key) or at all four (org, team,
// project, key), with leases of 256 (100,000 at once), of 16 (800) or of one request (50: a round
// trip per request). For each it prints Redis's own
// time (INFO commandstats, every command) per 1000 requests, the longest single command Redis ran
// (SLOWLOG, everything logged during the run), the limiter's round trips, and this process's CPU per
// 1000 requests (the limiter and the load driver together). Redis is single-threaded: a long script holds up every other client,
// the gateways' lease renewals and the usage queue alike.
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { Registry } from "prom-client";
import { redis } from "../../common/redis.ts";
import type { KeyInfo } from "../../gateway/auth/key-cache.ts";
import { LIMIT_SCOPES, type LimitBook, type ScopeLimits } from "../../gateway/auth/limit-book.ts";
import { leaseSize } from "../../gateway/auth/limit-lease.ts";
import { Limiter } from "../../gateway/auth/limiter.ts";

const { values } = parseArgs({ options: { requests: { type: "string", default: "4000" }, rate: { type: "string", default: "1000" } } });
const requests = Number(values.requests);
const rate = Number(values.rate);
if (!(requests > 0 && requests <= 100_000) || !(rate > 0 && rate <= 10_000)) throw new Error("bad --requests or --rate");

const conn = redis(undefined, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 2_000 });
const admin = redis();
const nothing = { promptTokens: 0, completionTokens: 0, costMicros: 0 };

/** Redis's own time in every command so far, µs. */
async function redisUsec(): Promise<number> {
  const info = await admin.info("commandstats");
  let total = 0;
  for (const m of info.matchAll(/usec=(\d+)/g)) total += Number(m[1]);
  return total;
}

async function longestCommandUs(): Promise<number> {
  const entries = (await admin.call("SLOWLOG", "GET", "1000")) as [number, number, number][];
  return entries.reduce((m, e) => Math.max(m, Number(e[2])), 0);
}

function keyInfo(): KeyInfo {
  return { id: randomUUID(), projectId: randomUUID(), teamId: randomUUID(), orgId: randomUUID(), models: [], band: "interactive", expiresAt: null, revoked: false };
}

function limitsFor(key: KeyInfo, scopes: number, concurrent: number): ScopeLimits[] {
  const ids = { org: key.orgId, team: key.teamId, project: key.projectId, key: key.id };
  return LIMIT_SCOPES.slice(LIMIT_SCOPES.length - scopes).map((scope) => ({
    scope,
    scopeId: ids[scope],
    rpm: 10_000_000, // never the tightest: the lease's size is set by `concurrent`
    tpm: null,
    concurrent,
    monthlyBudgetMicros: null,
    monthlyBudgetGpuSeconds: null,
  }));
}

async function run(scopes: number, concurrent: number): Promise<Record<string, number>> {
  const key = keyInfo();
  const rows = limitsFor(key, scopes, concurrent);
  const metrics = new Registry();
  const limiter = new Limiter(conn, { forKey: () => rows, version: 1 } as unknown as LimitBook, metrics);
  await limiter.admit(key).then((a) => a.release(nothing)); // the first lease, outside the measure
  const slowlogWas = (await admin.config("GET", "slowlog-log-slower-than")) as string[];
  await admin.config("SET", "slowlog-log-slower-than", "0");
  await admin.call("SLOWLOG", "RESET");
  const usec0 = await redisUsec();
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  let refused = 0;
  const releases: Promise<void>[] = [];
  for (let i = 0; i < requests; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    releases.push(
      limiter.admit(key).then(async (a) => {
        if (a.refused) refused++;
        await new Promise((r) => setTimeout(r, 1));
        a.release(nothing);
      }),
    );
  }
  await Promise.all(releases);
  await limiter.close();
  const cpu = process.cpuUsage(cpu0);
  const usec = (await redisUsec()) - usec0;
  const longest = await longestCommandUs();
  await admin.config("SET", "slowlog-log-slower-than", String(slowlogWas[1]));
  const trips = Number(/llmgw_limits_redis_admissions_total (\d+)/.exec(await metrics.metrics())?.[1] ?? 0);
  return {
    redis_ms_per_1000: usec / 1000 / (requests / 1000),
    longest_command_ms: longest / 1000,
    round_trips: trips,
    bench_cpu_ms_per_1000: (cpu.user + cpu.system) / 1000 / (requests / 1000),
    refused,
    lease: leaseSize(rows),
  };
}

async function main(): Promise<void> {
  await admin.ping();
  const cases: [number, number][] = [
    [1, 100_000],
    [4, 100_000],
    [1, 800],
    [4, 800],
    [1, 50],
    [4, 50],
  ];
  process.stdout.write(`${requests} requests at ${rate}/s each, released 1 ms after admission\n`);
  process.stdout.write("scopes  lease  Redis ms/1000  longest command ms  round trips  bench CPU ms/1000  refused\n");
  const out = [];
  for (const [scopes, concurrent] of cases) {
    const r = await run(scopes, concurrent);
    out.push({ scopes, ...r });
    process.stdout.write(
      `${String(scopes).padStart(6)}  ${String(r.lease).padStart(5)}  ${r.redis_ms_per_1000!.toFixed(2).padStart(13)}  ${r.longest_command_ms!.toFixed(2).padStart(18)}  ${String(r.round_trips).padStart(11)}  ${r.bench_cpu_ms_per_1000!.toFixed(1).padStart(17)}  ${String(r.refused).padStart(7)}\n`,
    );
  }
  process.stdout.write(JSON.stringify(out) + "\n");
  conn.disconnect();
  admin.disconnect();
}

await main();
