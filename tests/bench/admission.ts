// Admission by band (not part of the test suite):
//   node --import tsx tests/bench/admission.ts [--slots 8] [--ttft-ms 10] [--tokens-per-second 500]
//     [--max-tokens 8] [--batch 500] [--requests 40]
// One sim replica that is the bottleneck (few slots, a token rate), the gateway told the same slot
// count (LLMGW_REPLICA_SLOTS). An interactive-band client sends --requests requests one after
// another, first on an idle model, then while --batch batch-band clients keep one request each in
// flight (closed loop). Run with admission on, then again after restarting the gateway with
// LLMGW_ADMISSION=off (every request goes straight to the engine's FIFO queue). Prints p50/p99 of
// the interactive client's latency (send to whole answer) idle and loaded, the ratios, the batch
// requests answered and refused, and the load average (the machine is shared).
import { parseArgs } from "node:util";
import { Pool } from "undici";
import { loadAverage, percentile } from "./load.ts";
import { restartGateway, startBenchPlatform, type BenchPlatform } from "./bench-platform.ts";

const { values } = parseArgs({
  options: {
    slots: { type: "string", default: "8" },
    "ttft-ms": { type: "string", default: "10" },
    "tokens-per-second": { type: "string", default: "500" },
    "max-tokens": { type: "string", default: "8" },
    batch: { type: "string", default: "500" },
    requests: { type: "string", default: "40" },
  },
});
const slots = Number(values.slots);
const batch = Math.min(Number(values.batch), 2000);
const requests = Math.min(Number(values.requests), 200); // bounded: each loaded one may wait behind the whole batch
const maxTokens = Number(values["max-tokens"]);
if (![slots, batch, requests, maxTokens].every((n) => Number.isInteger(n) && n > 0)) throw new Error("bad flags");

interface Latency {
  p50: number;
  p99: number;
  failed: number;
}

const body = (model: string, i: number) => JSON.stringify({ model, messages: [{ role: "user", content: `Tell me something (${i}).` }], max_tokens: maxTokens, seed: i });

async function post(pool: Pool, key: string, payload: string): Promise<boolean> {
  const r = await pool.request({ path: "/v1/chat/completions", method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: payload });
  await r.body.text();
  return r.statusCode === 200;
}

/** The interactive client: one request at a time. */
async function interactive(pool: Pool, b: BenchPlatform, key: string): Promise<Latency> {
  const lat = new Float64Array(requests);
  let failed = 0;
  for (let i = 0; i < requests; i++) {
    const t0 = performance.now();
    if (!(await post(pool, key, body(b.model, i)).catch(() => false))) failed++;
    lat[i] = performance.now() - t0;
  }
  lat.sort();
  return { p50: percentile(lat, 50), p99: percentile(lat, 99), failed };
}

/** `batch` closed-loop clients until stop(); counts answered and refused requests. */
function batchLoad(pool: Pool, b: BenchPlatform, key: string) {
  let running = true;
  const counts = { ok: 0, refused: 0 };
  const client = async (c: number) => {
    for (let i = 0; running; i++) {
      if (await post(pool, key, body(b.model, 1000 + c * 7 + i)).catch(() => false)) counts.ok++;
      else counts.refused++;
    }
  };
  const all = Promise.all(Array.from({ length: batch }, (_, c) => client(c)));
  return {
    counts,
    async stop() {
      running = false;
      await all;
    },
  };
}

async function measure(b: BenchPlatform, keys: { interactive: string; batch: string }) {
  const iPool = new Pool(b.p.clientUrl, { connections: 4 });
  const bPool = new Pool(b.p.clientUrl, { connections: batch + 16 });
  try {
    await interactive(iPool, b, keys.interactive); // warm-up: connections, JIT, key cache
    const idle = await interactive(iPool, b, keys.interactive);
    const loadIdle = loadAverage();
    const load = batchLoad(bPool, b, keys.batch);
    // Let every batch client get its first request in before measuring.
    await new Promise((r) => setTimeout(r, 2_000));
    const loaded = await interactive(iPool, b, keys.interactive);
    const loadLoaded = loadAverage();
    await load.stop();
    return { idle, loaded, batch: { ...load.counts }, loadIdle, loadLoaded };
  } finally {
    await Promise.all([iPool.close(), bPool.close()]);
  }
}

const ms = (v: number) => v.toFixed(1).padStart(8);

async function main(): Promise<void> {
  const simArgs = [`--slots=${slots}`, `--ttft-ms=${values["ttft-ms"]}`, `--tokens-per-second=${values["tokens-per-second"]}`];
  const b = await startBenchPlatform({ replicas: 1, simArgs, env: { LLMGW_REPLICA_SLOTS: String(slots), LLMGW_ADMISSION: "on" } });
  try {
    const keys = { interactive: await b.key("interactive"), batch: await b.key("batch") };
    process.stdout.write(`sim ${simArgs.join(" ")}, max_tokens ${maxTokens}; ${batch} batch clients; ${requests} interactive requests each phase\n`);
    const on = await measure(b, keys);
    await restartGateway(b, { LLMGW_ADMISSION: "off" }, keys.interactive);
    const off = await measure(b, keys);
    process.stdout.write("admission  idle p50  idle p99  load p50  load p99  ratio p50  ratio p99  failed  batch ok/refused  load avg idle | loaded\n");
    const rows = [];
    for (const [mode, r] of [["on", on], ["off", off]] as const) {
      const ratio50 = r.loaded.p50 / r.idle.p50;
      const ratio99 = r.loaded.p99 / r.idle.p99;
      process.stdout.write(
        `${mode.padEnd(9)} ${ms(r.idle.p50)}  ${ms(r.idle.p99)}  ${ms(r.loaded.p50)}  ${ms(r.loaded.p99)}  ${ratio50.toFixed(2).padStart(8)}×  ${ratio99.toFixed(2).padStart(8)}×  ${String(r.idle.failed + r.loaded.failed).padStart(6)}  ${`${r.batch.ok}/${r.batch.refused}`.padStart(16)}  ${r.loadIdle} | ${r.loadLoaded}\n`,
      );
      rows.push({ admission: mode, idle: r.idle, loaded: r.loaded, ratio_p50: ratio50, ratio_p99: ratio99, batch: r.batch, load_idle: r.loadIdle, load_loaded: r.loadLoaded });
    }
    process.stdout.write(JSON.stringify(rows) + "\n");
  } finally {
    await b.p.stop();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
