// Prefix affinity (not part of the test suite):
//   node --import tsx tests/bench/affinity.ts [--replicas 4] [--conversations 32] [--turns 6]
//     [--ttft-ms 80] [--prefix-cache-ttft-ms 10] [--think-ms 250]
// Sim replicas that model a prefix cache (--prefix-cache-ttft-ms: a prompt whose first 256
// characters the replica served recently starts sooner; counted in vllm:prefix_cache_* metrics).
// A multi-turn workload: each conversation has its own long system prompt (the shared prefix) and
// grows by a user message and the answer every turn; conversations run concurrently, the turns of
// one in order, a pause of about --think-ms (0.5–1.5×) between them. Streamed; time to first token is measured at the client (through the gateway).
// Run once with the chat profile (affinity) and once with the batch profile (shortest queue,
// ties in turn: round robin when idle), each with fresh prefixes. Prints TTFT p50/p99 and the
// share of requests that found their prefix cached (from the replicas' metrics), with the load average.
import { parseArgs } from "node:util";
import { Pool } from "undici";
import { loadAverage, percentile } from "./load.ts";
import { startBenchPlatform, type BenchPlatform } from "./bench-platform.ts";
import { PREFIX_CACHE_CHARS } from "../../agent/engines/sim/prefix-cache.ts";

const { values } = parseArgs({
  options: {
    replicas: { type: "string", default: "4" },
    conversations: { type: "string", default: "32" },
    turns: { type: "string", default: "6" },
    "ttft-ms": { type: "string", default: "80" },
    "prefix-cache-ttft-ms": { type: "string", default: "10" },
    "think-ms": { type: "string", default: "250" },
  },
});
const replicas = Math.min(Number(values.replicas), 8);
const conversations = Math.min(Number(values.conversations), 256);
const turns = Math.min(Number(values.turns), 20);
const thinkMs = Math.min(Number(values["think-ms"]), 10_000);
if (![replicas, conversations, turns].every((n) => Number.isInteger(n) && n > 0) || !(thinkMs >= 0)) throw new Error("bad flags");

/** Tokens of one prompt's cached prefix, as the sim counts them (4 characters a token). */
const PREFIX_TOKENS = Math.ceil(PREFIX_CACHE_CHARS / 4);

async function prefixHits(urls: string[]): Promise<number> {
  let hits = 0;
  for (const u of urls) {
    const text = await (await fetch(`${u}/metrics`)).text();
    const m = /^vllm:prefix_cache_hits_total\{[^}]*\} (\S+)$/m.exec(text);
    hits += m ? Number(m[1]) : 0;
  }
  return hits;
}

/** One streamed turn; milliseconds to the first body byte (the sim sends nothing before its first token). */
async function turn(pool: Pool, b: BenchPlatform, key: string, profile: string, messages: unknown[]): Promise<{ ttft: number; answer: string }> {
  const t0 = performance.now();
  const r = await pool.request({
    path: "/v1/chat/completions",
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}`, "x-llmgw-profile": profile },
    body: JSON.stringify({ model: b.model, messages, max_tokens: 8, stream: true }),
  });
  let ttft = -1;
  let text = "";
  for await (const chunk of r.body) {
    if (ttft < 0) ttft = performance.now() - t0;
    text += chunk.toString("utf8");
  }
  if (r.statusCode !== 200) throw new Error(`status ${r.statusCode}: ${text.slice(0, 200)}`);
  const answer = [...text.matchAll(/"content":("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1]!) as string).join("");
  return { ttft, answer };
}

async function run(b: BenchPlatform, key: string, profile: "chat" | "batch") {
  const pool = new Pool(b.p.clientUrl, { connections: conversations + 4 });
  const urls = await b.replicaUrls();
  const hits0 = await prefixHits(urls);
  const ttfts: number[] = [];
  const conversation = async (c: number) => {
    // The conversation's own prefix: its id first, then more than the cached prefix's length.
    const system = `[${profile} conversation ${c}] You are a careful assistant. ` + "Answer briefly and cite the manual where you can. ".repeat(8);
    const messages: { role: string; content: string }[] = [{ role: "system", content: system }];
    for (let t = 0; t < turns; t++) {
      messages.push({ role: "user", content: `Question ${t} of conversation ${c}?` });
      const { ttft, answer } = await turn(pool, b, key, profile, messages);
      ttfts.push(ttft);
      messages.push({ role: "assistant", content: answer });
      // The user reads and types: without a pause the closed loop only measures how fast this machine's CPUs go.
      await new Promise((r) => setTimeout(r, thinkMs * (0.5 + Math.random())));
    }
  };
  await Promise.all(Array.from({ length: conversations }, (_, c) => conversation(c)));
  const hitShare = (await prefixHits(urls)) - hits0;
  await pool.close();
  const sorted = Float64Array.from(ttfts).sort();
  return { profile, requests: ttfts.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), hitShare: hitShare / PREFIX_TOKENS / ttfts.length, load: loadAverage() };
}

async function main(): Promise<void> {
  const simArgs = [`--ttft-ms=${values["ttft-ms"]}`, `--prefix-cache-ttft-ms=${values["prefix-cache-ttft-ms"]}`, "--tokens-per-second=1000"];
  const b = await startBenchPlatform({ replicas, simArgs });
  try {
    const key = await b.key();
    process.stdout.write(`${replicas} sim replicas ${simArgs.join(" ")}; ${conversations} conversations × ${turns} turns, ~${thinkMs} ms between turns (the best possible hit share is ${((turns - 1) / turns).toFixed(2)})\n`);
    // Warm-up on other prefixes: connections, JIT, the key in the gateway's cache.
    const warm = new Pool(b.p.clientUrl);
    await turn(warm, b, key, "batch", [{ role: "user", content: "warm up" }]);
    await warm.close();
    const out = [await run(b, key, "chat"), await run(b, key, "batch")];
    process.stdout.write("profile          requests  TTFT p50  TTFT p99  hit share  load avg\n");
    for (const r of out) {
      const name = r.profile === "chat" ? "chat (affinity)" : "batch (in turn)";
      process.stdout.write(`${name.padEnd(16)} ${String(r.requests).padStart(8)}  ${r.p50.toFixed(1).padStart(8)}  ${r.p99.toFixed(1).padStart(8)}  ${r.hitShare.toFixed(2).padStart(9)}  ${r.load}\n`);
    }
    process.stdout.write(JSON.stringify(out) + "\n");
  } finally {
    await b.p.stop();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
