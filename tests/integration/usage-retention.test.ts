// What the usage queue keeps once the ledger holds a batch: at most KEEP_WRITTEN_BATCHES.count of
// them stay in Redis, and none of their events is missing from the ledger. A real usage worker on
// the test database and Redis; the gateway's recorder sends one event a batch.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import { Queue } from "bullmq";
import pg from "pg";
import { waitFor } from "../../common/children.ts";
import { loadConfig } from "../../common/config.ts";
import { migrate } from "../../common/migrate.ts";
import { redis } from "../../common/redis.ts";
import { USAGE_QUEUE, type UsageEvent } from "../../common/usage-event.ts";
import { KEEP_WRITTEN_BATCHES, UsageRecorder } from "../../gateway/usage/recorder.ts";
import { runUsageWorker } from "../../workers/usage.ts";

const url = loadConfig().databaseUrl;
const conn = redis();
const queue = new Queue(USAGE_QUEUE, { connection: conn });
let db: pg.Pool;
let worker: Awaited<ReturnType<typeof runUsageWorker>>;

before(async () => {
  await migrate(url);
  db = new pg.Pool({ connectionString: url, max: 1 });
  worker = await runUsageWorker();
});
after(async () => {
  await worker?.shutdown();
  await queue.close();
  conn.disconnect();
  await db?.end();
});

const event = (keyId: string): UsageEvent => ({
  id: randomUUID(),
  at: new Date().toISOString(),
  keyId,
  projectId: null,
  model: "retention-test",
  version: null,
  replicaId: null,
  endpoint: "/v1/chat/completions",
  promptTokens: 1,
  cachedTokens: 0,
  completionTokens: 1,
  costMicros: 1,
  latencyMs: 1,
  ttftMs: null,
  status: 200,
});

test("written batches past the kept number leave Redis; every event is in the ledger", async () => {
  const keyId = randomUUID();
  const n = KEEP_WRITTEN_BATCHES.count + 50;
  const recorderConn = redis();
  const rec = new UsageRecorder(recorderConn, 1, 10);
  try {
    for (let i = 0; i < n; i++) rec.record(event(keyId));
    await waitFor("every batch queued", async () => rec.pending() === 0, 30_000, 50);
    await waitFor(
      `${n} events in the ledger`,
      async () => Number((await db.query<{ c: string }>("SELECT count(*) AS c FROM usage_events WHERE key_id = $1", [keyId])).rows[0]!.c) === n,
      60_000,
      100,
    );
    await waitFor("no batch left to write", async () => Object.values(await queue.getJobCounts("waiting", "active", "delayed")).every((c) => c === 0), 30_000, 100);
    const kept = await queue.getJobCountByTypes("completed");
    assert.ok(kept <= KEEP_WRITTEN_BATCHES.count, `${kept} written batches kept in Redis, more than ${KEEP_WRITTEN_BATCHES.count}`);
    assert.ok(kept >= KEEP_WRITTEN_BATCHES.count / 2, `only ${kept} written batches kept: the recent ones are there to look at`);
  } finally {
    await rec.close();
    recorderConn.disconnect();
  }
});
