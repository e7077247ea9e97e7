// An interactive client beside a large /v1/batches job (not part of the test suite):
//   node --import tsx tests/bench/batch-latency.ts [--lines 2000] [--slots 8] [--ttft-ms 10]
//     [--tokens-per-second 500] [--max-tokens 8] [--requests 40]
// The admission bench's set-up (admission.ts): one sim replica that is the bottleneck, the gateway
// told its slot count. An interactive-band client sends --requests requests one after another on
// the idle model; then a batch of --lines chat lines is uploaded and created through the official
// SDK (files.create purpose batch, batches.create), and once its lines are flowing the same client
// is measured again while the batch runs. The batch's lines go through the gateway in the batch band
// (workflows/batch.ts), so admission keeps room for interactive traffic. Prints the interactive
// p50/p99 idle and during the batch, their ratio (issue 29: at the admission bench's ratio, p50 at
// most 1.2×), how far the batch had got, its lines per second, and the load average.
import { parseArgs } from "node:util";
import OpenAI, { toFile } from "openai";
import { Pool } from "undici";
import { loadAverage, percentile } from "./load.ts";
import { startBenchPlatform, type BenchPlatform } from "./bench-platform.ts";

const { values } = parseArgs({
  options: {
    lines: { type: "string", default: "2000" },
    slots: { type: "string", default: "8" },
    "ttft-ms": { type: "string", default: "10" },
    "tokens-per-second": { type: "string", default: "500" },
    "max-tokens": { type: "string", default: "8" },
    requests: { type: "string", default: "40" },
  },
});
const [lines, slots, maxTokens, requests] = [values.lines, values.slots, values["max-tokens"], values.requests].map(Number) as [number, number, number, number];
if (![lines, slots, maxTokens, requests].every((n) => Number.isInteger(n) && n > 0)) throw new Error("bad flags");

const chat = (model: string, i: number) => ({ model, messages: [{ role: "user", content: `Tell me something (${i}).` }], max_tokens: maxTokens, seed: i });

async function interactive(pool: Pool, b: BenchPlatform, key: string) {
  const lat = new Float64Array(requests);
  let failed = 0;
  for (let i = 0; i < requests; i++) {
    const t0 = performance.now();
    const r = await pool.request({ path: "/v1/chat/completions", method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify(chat(b.model, i)) });
    await r.body.text();
    if (r.statusCode !== 200) failed++;
    lat[i] = performance.now() - t0;
  }
  lat.sort();
  return { p50: percentile(lat, 50), p99: percentile(lat, 99), failed };
}

async function main(): Promise<void> {
  const simArgs = [`--slots=${slots}`, `--ttft-ms=${values["ttft-ms"]}`, `--tokens-per-second=${values["tokens-per-second"]}`];
  const b = await startBenchPlatform({ replicas: 1, simArgs, env: { LLMGW_REPLICA_SLOTS: String(slots), LLMGW_ADMISSION: "on" } });
  const pool = new Pool(b.p.clientUrl, { connections: 4 });
  try {
    const key = await b.key("interactive");
    const sdk = new OpenAI({ apiKey: await b.key("interactive"), baseURL: `${b.p.clientUrl}/v1` });
    process.stdout.write(`sim ${simArgs.join(" ")}, max_tokens ${maxTokens}; a batch of ${lines} lines; ${requests} interactive requests each phase\n`);
    await interactive(pool, b, key); // warm-up: connections, JIT, key cache
    const idle = await interactive(pool, b, key);
    const loadIdle = loadAverage();

    const jsonl = Array.from({ length: lines }, (_, i) => JSON.stringify({ custom_id: `l${i}`, method: "POST", url: "/v1/chat/completions", body: chat(b.model, 10_000 + i) })).join("\n");
    const file = await sdk.files.create({ file: await toFile(Buffer.from(jsonl), "bench.jsonl"), purpose: "batch" });
    const t0 = performance.now();
    const created = await sdk.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
    // Measured once lines are flowing (a tenth done, or a hundred).
    const flowing = Math.min(100, Math.ceil(lines / 10));
    for (;;) {
      const now = await sdk.batches.retrieve(created.id);
      if ((now.request_counts?.completed ?? 0) >= flowing || ["completed", "failed", "cancelled", "expired"].includes(now.status)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const atStart = (await sdk.batches.retrieve(created.id)).request_counts?.completed ?? 0;
    const loaded = await interactive(pool, b, key);
    const atEnd = await sdk.batches.retrieve(created.id);
    const loadLoaded = loadAverage();
    let done = atEnd;
    while (!["completed", "failed", "cancelled", "expired"].includes(done.status)) {
      await new Promise((r) => setTimeout(r, 500));
      done = await sdk.batches.retrieve(created.id);
    }
    const seconds = (performance.now() - t0) / 1000;
    const ms = (v: number) => v.toFixed(1);
    const row = {
      idle, loaded,
      ratio_p50: loaded.p50 / idle.p50, ratio_p99: loaded.p99 / idle.p99,
      batch: { lines, status: done.status, completed: done.request_counts?.completed ?? 0, failed: done.request_counts?.failed ?? 0, lines_during_measure: (atEnd.request_counts?.completed ?? 0) - atStart, seconds, lines_per_second: lines / seconds },
      load_idle: loadIdle, load_loaded: loadLoaded,
    };
    process.stdout.write(`interactive idle p50/p99 ${ms(idle.p50)} / ${ms(idle.p99)} ms; during the batch ${ms(loaded.p50)} / ${ms(loaded.p99)} ms; ratio ${row.ratio_p50.toFixed(2)}× / ${row.ratio_p99.toFixed(2)}×; failed ${idle.failed + loaded.failed}\n`);
    process.stdout.write(`batch ${done.status}: ${row.batch.completed} completed, ${row.batch.failed} failed, ${row.batch.lines_during_measure} lines answered while measuring, ${seconds.toFixed(1)} s (${row.batch.lines_per_second.toFixed(1)} lines/s); load average ${loadIdle} | ${loadLoaded}\n`);
    process.stdout.write(JSON.stringify(row) + "\n");
  } finally {
    await pool.close();
    await b.p.stop();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
