// Nothing is lost from the ledger: with Redis unreachable the gateway's recorder keeps every event
// and queues each once when Redis is back; with PostgreSQL stopped under load for longer than the
// gateway trusts a cached key (LLMGW_KEY_CACHE_MS, 10 s here, so 20 s suffice), and with
// the usage worker killed mid-batch, every request sent still lands in usage_events exactly once.
// PostgreSQL is stopped on a throwaway cluster of this test's own, never the shared server.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import { after, before, describe, it } from "node:test";
import { Queue } from "bullmq";
import OpenAI from "openai";
import pg from "pg";
import { waitFor } from "../../common/children.ts";
import { redis } from "../../common/redis.ts";
import { USAGE_QUEUE, usageBatch, type UsageEvent } from "../../common/usage-event.ts";
import { UsageRecorder } from "../../gateway/usage/recorder.ts";
import { freePort, startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";
import { startThrowawayPostgres, type ThrowawayPostgres } from "../helpers/postgres.ts";

/** The gateway's LLMGW_KEY_CACHE_MS here (60 s by default), and a store outage twice as long. */
const KEY_CACHE_MS = 10_000;
const OUTAGE_MS = 2 * KEY_CACHE_MS;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const redisUrl = () => process.env.REDIS_URL ?? "redis://127.0.0.1:6380";

/** A TCP relay to the real Redis that the test can cut and restore, so "Redis away" needs no outage. */
async function redisRelay(): Promise<{ url: string; cut(): Promise<void>; restore(): Promise<void>; close(): Promise<void> }> {
  const target = new URL(redisUrl());
  const port = await freePort();
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = net.createServer((c) => {
        const up = net.connect(Number(target.port || 6379), target.hostname);
        for (const s of [c, up]) {
          sockets.add(s);
          s.on("error", () => undefined);
          s.on("close", () => sockets.delete(s));
        }
        c.pipe(up).pipe(c);
        c.on("close", () => up.destroy());
        up.on("close", () => c.destroy());
      });
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
    });
  const cut = async () => {
    const s = server;
    server = null;
    for (const sock of sockets) sock.destroy();
    if (s) await new Promise<void>((r) => s.close(() => r()));
  };
  await listen();
  const url = new URL(target.href);
  url.host = `127.0.0.1:${port}`;
  return { url: url.toString(), cut, restore: listen, close: cut };
}

function event(keyId: string): UsageEvent {
  return { id: randomUUID(), at: new Date().toISOString(), keyId, projectId: null, model: "m", version: null, replicaId: null, endpoint: "/v1/chat/completions", promptTokens: 1, cachedTokens: 0, completionTokens: 1, costMicros: 1, latencyMs: 1, ttftMs: null, status: 200 };
}

describe("the usage recorder with Redis unreachable", () => {
  it("keeps every event in memory, fails no record, and queues each once when Redis is back", async () => {
    const relay = await redisRelay();
    const conn = redis(relay.url);
    conn.on("error", () => undefined);
    const direct = redis(redisUrl());
    const queue = new Queue(USAGE_QUEUE, { connection: direct });
    const rec = new UsageRecorder(conn, 50, 50);
    const marker = `relay-${randomUUID()}`;
    try {
      for (let i = 0; i < 100; i++) rec.record(event(marker));
      await rec.flush();
      assert.equal(rec.enqueued, 100);

      await relay.cut();
      for (let i = 0; i < 300; i++) rec.record(event(marker)); // never throws, never waits
      assert.equal(rec.pending(), 300);
      await sleep(1500);
      assert.equal(rec.enqueued, 100, "nothing reached the queue while Redis was away");
      assert.equal(rec.pending(), 300, "and nothing was dropped");

      await relay.restore();
      await waitFor("the buffered events to be queued", async () => rec.pending() === 0, 30_000, 100);
      assert.equal(rec.enqueued, 400);
      assert.equal(rec.dropped, 0);

      // What the queue holds for this test: every event once (a batch sent twice would show twice).
      const jobs = await queue.getJobs(["waiting", "prioritized", "delayed", "active", "completed", "failed"]);
      const ids = jobs.flatMap((j) => usageBatch.parse(j.data).events.filter((e) => e.keyId === marker).map((e) => e.id));
      assert.equal(ids.length, 400);
      assert.equal(new Set(ids).size, 400);
      for (const j of jobs) if (usageBatch.parse(j.data).events.some((e) => e.keyId === marker)) await j.remove().catch(() => undefined);
    } finally {
      await rec.close();
      conn.disconnect();
      await queue.close();
      direct.disconnect();
      await relay.close();
    }
  });
});

interface LoadResult {
  ok: number;
  failed: string[];
}

/** n chat requests with one key, one every paceMs whatever the answers take (a steady load). */
async function load(client: OpenAI, model: string, n: number, paceMs: number, onSent?: (i: number) => void): Promise<LoadResult> {
  const out: LoadResult = { ok: 0, failed: [] };
  const all: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    all.push(
      client.chat.completions.create({ model, messages: [{ role: "user", content: `r${i}` }], max_tokens: 2 }).then(
        () => void out.ok++,
        (err: Error) => void out.failed.push(`#${i}: ${err.message}`),
      ),
    );
    onSent?.(i);
    await sleep(paceMs);
  }
  await Promise.all(all);
  return out;
}

/** The key's events in the ledger. The id is the primary key, so "exactly once" is count = N. */
async function ledger(url: string, keyId: string): Promise<{ count: number }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ count: string }>("SELECT count(*) AS count FROM usage_events WHERE key_id = $1", [keyId]);
    return { count: Number(r.rows[0]!.count) };
  } finally {
    await c.end();
  }
}

describe("every request lands in the ledger exactly once", () => {
  let cluster: ThrowawayPostgres;
  let p: Platform;
  let queue: Queue;
  const direct = redis(redisUrl());
  const model = uniqueModel("usage-dur");

  before(async () => {
    cluster = await startThrowawayPostgres();
    p = await startPlatform({ databaseUrl: cluster.url, env: { LLMGW_KEY_CACHE_MS: String(KEY_CACHE_MS) } });
    queue = new Queue(USAGE_QUEUE, { connection: direct });
    assert.equal((await p.ctl(["projects", "create", "usage"])).code, 0);
    const served = await p.ctl(["model", "serve", model, "--engine", "sim", "--replicas", "1", "--wait", "--json"]);
    assert.equal(served.code, 0, served.stderr);
  });

  after(async () => {
    await queue?.close();
    direct.disconnect();
    await p?.stop();
    cluster?.destroy();
  });

  async function newKey(): Promise<{ id: string; client: OpenAI }> {
    const created = await p.ctl(["keys", "create", "--project", "usage", "--json"]);
    assert.equal(created.code, 0, created.stderr);
    const k = JSON.parse(created.stdout) as { id: string; key: string };
    return { id: k.id, client: new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: k.key, maxRetries: 0, timeout: 30_000 }) };
  }

  /** Waits until the queue has nothing left to write and the ledger holds at least n; returns the ledger. */
  async function settled(keyId: string, n: number, timeoutMs: number) {
    return waitFor(
      `${n} events in the ledger and an idle usage queue`,
      async () => {
        const l = await ledger(cluster.url, keyId);
        if (l.count < n) return null;
        const c = await queue.getJobCounts("waiting", "active", "delayed", "prioritized");
        return Object.values(c).every((v) => v === 0) ? l : null;
      },
      timeoutMs,
      500,
    );
  }

  it("the usage worker runs at its lower CPU priority (LLMGW_USAGE_WORKER_NICE, 10); the Temporal worker at ours", () => {
    assert.equal(os.getPriority(p.children.get("worker-usage")!.proc.pid!), 10);
    assert.equal(os.getPriority(p.children.get("worker-temporal")!.proc.pid!), os.getPriority());
  });

  it("with PostgreSQL stopped under load past the key cache's time, the gateway serves on and the ledger gets all N once", async () => {
    // 33 s of steady load: the outage starts within the first seconds and lasts OUTAGE_MS.
    const N = 300;
    const { id, client } = await newKey();
    const running = load(client, model, N, 110);
    await waitFor("the first events in the ledger", async () => (await ledger(cluster.url, id)).count > 0, 30_000, 100);
    cluster.stop();
    // Twice the key cache's time without the store: the key's entry expires meanwhile, so the
    // last requests of the outage are served from what the gateway knew.
    await sleep(OUTAGE_MS);
    cluster.start();
    const result = await running;
    assert.deepEqual(result.failed.slice(0, 5), [], `${result.failed.length} of ${N} requests failed`);
    assert.equal(result.ok, N);
    assert.equal(p.children.get("gateway")?.proc.exitCode, null, "the gateway is still up");
    assert.match(fs.readFileSync(p.children.get("gateway")!.logFile, "utf8"), /serving the key as last known/, "the key outlived its cache entry during the outage");
    const l = await settled(id, N, 180_000);
    assert.equal(l.count, N, "exactly one event per request");
  });

  it("with the usage worker killed mid-batch (twice), the ledger still gets all N once", async (t) => {
    const N = 800;
    const { id, client } = await newKey();
    const running = load(client, model, N, 20);
    for (let round = 1; round <= 2; round++) {
      const before = (await ledger(cluster.url, id)).count;
      await waitFor(`events landing (round ${round})`, async () => (await ledger(cluster.url, id)).count > before, 60_000, 50);
      // Kill it while it holds a batch (writes take milliseconds: look often).
      const active = await waitFor("a batch being written", async () => await queue.getActiveCount(), 20_000, 2);
      await p.kill("worker-usage", "SIGKILL");
      t.diagnostic(`round ${round}: killed with ${active} batch(es) active`);
      await p.start("worker-usage");
    }
    const result = await running;
    assert.deepEqual(result.failed.slice(0, 5), [], `${result.failed.length} of ${N} requests failed`);
    const l = await settled(id, N, 180_000);
    assert.equal(l.count, N, "exactly one event per request");
  });
});
