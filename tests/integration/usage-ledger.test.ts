// The usage worker's ledger write (workers/usage-ledger.ts) on the real PostgreSQL: every field reads
// back as the gateway sent it (nulls, a cost past 2^31, the millisecond of the time), a batch written
// again adds nothing, and a batch half new counts only its new events.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import pg from "pg";
import { loadConfig } from "../../common/config.ts";
import { closePrisma, prisma, type PrismaClient } from "../../common/db.ts";
import { migrate } from "../../common/migrate.ts";
import type { UsageEvent } from "../../common/usage-event.ts";
import { writeUsageBatch } from "../../workers/usage-ledger.ts";

let db: PrismaClient;
let pool: pg.Pool;
before(async () => {
  const url = loadConfig().databaseUrl;
  await migrate(url);
  db = prisma(url);
  pool = new pg.Pool({ connectionString: url, max: 2 });
});
after(() => Promise.all([closePrisma(), pool.end()]));

const event = (over: Partial<UsageEvent> = {}): UsageEvent => ({
  id: randomUUID(),
  at: "2026-11-30T06:48:47.843Z",
  keyId: randomUUID(),
  projectId: randomUUID(),
  model: "ledger-test",
  version: "v1",
  replicaId: "r-1",
  endpoint: "/v1/chat/completions",
  promptTokens: 12,
  cachedTokens: 4,
  completionTokens: 30,
  costMicros: 5_000_000_000,
  latencyMs: 12.375,
  ttftMs: 3.5,
  status: 200,
  personId: "ledger-person",
  gpuSeconds: 1.25,
  cache: "similar",
  batchId: "batch_ledger",
  ...over,
});

test("every field is written as sent, nulls included, whatever the session's time zone", async () => {
  const full = event();
  const bare = event({ keyId: null, projectId: null, version: null, replicaId: null, ttftMs: null, costMicros: 0, status: 503, personId: null, gpuSeconds: undefined, cache: undefined, batchId: undefined });
  // One connection for both statements, its session in another time zone; read back through Prisma.
  const conn = await pool.connect();
  let written: number;
  try {
    await conn.query("SET TIME ZONE 'America/New_York'");
    assert.equal((await conn.query<{ TimeZone: string }>("SHOW TIME ZONE")).rows[0]!.TimeZone, "America/New_York");
    written = await writeUsageBatch(conn, [full, bare]);
  } finally {
    conn.release(true); // not back to the pool with its time zone
  }
  assert.equal(written, 2);
  for (const e of [full, bare]) {
    const row = await db.usageEvent.findUniqueOrThrow({ where: { id: e.id } });
    // An event without GPU-seconds (an outside provider, an older gateway) is written as 0; without a cache or a batch, null.
    assert.deepEqual({ ...row, at: row.at.toISOString(), costMicros: Number(row.costMicros) }, { ...e, gpuSeconds: e.gpuSeconds ?? 0, cache: e.cache ?? null, batchId: e.batchId ?? null });
  }
});

test("a batch written again adds nothing; a half-new batch counts only the new", async () => {
  const batch = [event(), event(), event()];
  assert.equal(await writeUsageBatch(pool, batch), 3);
  assert.equal(await writeUsageBatch(pool, batch), 0);
  assert.equal(await writeUsageBatch(pool, [...batch.slice(1), event()]), 1);
  assert.equal(await db.usageEvent.count({ where: { id: { in: batch.map((e) => e.id) } } }), 3);
  assert.equal(await writeUsageBatch(pool, []), 0);
});
