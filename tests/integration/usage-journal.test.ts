// The usage journal (gateway/usage/journal.ts): a recorded event is in Redis before record()'s
// `journaled` resolves and leaves the journal once BullMQ holds it; a dead gateway's journal (its
// heartbeat gone) is queued by a live gateway's recorder, each event once, and then dropped.
// The whole path with a SIGKILLed gateway is tests/e2e/batches.test.ts's kill test.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { Queue } from "bullmq";
import { waitFor } from "../../common/children.ts";
import { redis } from "../../common/redis.ts";
import { USAGE_QUEUE, usageBatch, type UsageEvent } from "../../common/usage-event.ts";
import { UsageJournal } from "../../gateway/usage/journal.ts";
import { UsageRecorder } from "../../gateway/usage/recorder.ts";

const redisUrl = () => process.env.REDIS_URL ?? "redis://127.0.0.1:6380";

function event(keyId: string): UsageEvent {
  return { id: randomUUID(), at: new Date().toISOString(), keyId, projectId: null, model: "m", version: null, replicaId: null, endpoint: "/v1/chat/completions", promptTokens: 1, cachedTokens: 0, completionTokens: 1, costMicros: 1, latencyMs: 1, ttftMs: null, status: 200 };
}

/** The events of this marker the queue holds, by id, and the jobs holding them removed. */
async function queued(queue: Queue, marker: string): Promise<string[]> {
  const jobs = await queue.getJobs(["waiting", "prioritized", "delayed", "active", "completed", "failed"]);
  const ids: string[] = [];
  for (const j of jobs) {
    const mine = usageBatch.parse(j.data).events.filter((e) => e.keyId === marker);
    ids.push(...mine.map((e) => e.id));
  }
  return ids;
}

describe("the usage journal", () => {
  it("holds an event from record() until it is queued, then lets it go", async () => {
    const conn = redis(redisUrl());
    // A flush only when asked: the journal alone holds the events meanwhile.
    const rec = new UsageRecorder(conn, 1000, 600_000);
    const key = `llmgw:usage:journal:${rec.journal.id}`;
    try {
      const marker = `journal-${randomUUID()}`;
      const made = Array.from({ length: 30 }, () => rec.record(event(marker)));
      await Promise.all(made.map((m) => m.journaled));
      assert.equal(await conn.xlen(key), 30, "every event journaled before journaled resolved");
      await rec.flush();
      assert.equal(rec.enqueued, 30);
      assert.equal(await conn.xlen(key), 0, "queued events leave the journal");
    } finally {
      await rec.close();
      assert.equal(await conn.exists(key), 0, "an empty journal is dropped at a clean stop");
      conn.disconnect();
    }
  });

  it("queues a dead gateway's journal from another gateway's recorder, each event once", async () => {
    const conn = redis(redisUrl());
    // BullMQ leaves a connection it was given open at close(): it is closed here, or the file never ends.
    const queueConn = redis(redisUrl());
    const queue = new Queue(USAGE_QUEUE, { connection: queueConn });
    const marker = `dead-${randomUUID()}`;
    const dead = new UsageJournal(conn);
    await dead.beat();
    const events = Array.from({ length: 1200 }, () => event(marker));
    for (const e of events) await dead.append(JSON.stringify(e));
    // Killed: its heartbeat expires (here at once).
    await conn.del(`llmgw:usage:journal:${dead.id}:alive`);
    const live = new UsageRecorder(conn, 200, 50);
    try {
      await waitFor("the dead journal queued", async () => (await conn.exists(`llmgw:usage:journal:${dead.id}`)) === 0, 30_000, 100);
      const ids = await queued(queue, marker);
      assert.equal(ids.length, 1200);
      assert.equal(new Set(ids).size, 1200);
      assert.deepEqual(new Set(ids), new Set(events.map((e) => e.id)));
      assert.ok(!(await conn.zrange("llmgw:usage:journals", 0, -1)).includes(dead.id), "the dead journal is unregistered");
      assert.equal(live.drained, 1200);
    } finally {
      await live.close();
      await queue.close();
      queueConn.disconnect();
      conn.disconnect();
    }
  });
});
