// A job's spend on its key's budget counters (common/job-spend.ts) on the real Redis and store:
// added to the key, project, team and org counters of the row's month, once however often the
// activity calls it (a retry after a crash between the ledger row and the counters adds it then;
// a retry after both adds nothing), and another job's spend adds again.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import type { Redis } from "ioredis";
import { loadConfig } from "../../common/config.ts";
import { closePrisma, prisma, type PrismaClient } from "../../common/db.ts";
import { addJobSpend, limitPrefix, spendMonth } from "../../common/job-spend.ts";
import { migrate } from "../../common/migrate.ts";
import { redis as redisClient } from "../../common/redis.ts";

let db: PrismaClient;
let r: Redis;
const ids = { org: randomUUID(), team: randomUUID(), project: randomUUID(), key: randomUUID() };

before(async () => {
  const c = loadConfig();
  await migrate(c.databaseUrl);
  db = prisma(c.databaseUrl);
  r = redisClient(c.redisUrl);
  const tag = ids.key.slice(0, 8);
  await db.org.create({ data: { id: ids.org, name: `spend-org-${tag}` } });
  await db.team.create({ data: { id: ids.team, orgId: ids.org, name: "t" } });
  await db.project.create({ data: { id: ids.project, teamId: ids.team, name: `spend-${tag}` } });
  await db.apiKey.create({ data: { id: ids.key, projectId: ids.project, hash: `h-${ids.key}`, prefix: "sk-test" } });
});
after(async () => {
  r?.disconnect();
  await closePrisma();
});

test("a job's spend counts once in every scope of its key, in its row's month", async () => {
  const at = Date.UTC(2026, 10, 30, 23, 59); // the month of the row, not of the call
  const month = spendMonth(at);
  const counters = async () =>
    Promise.all(
      (["org", "team", "project", "key"] as const).map(async (scope) => {
        const p = limitPrefix(scope, ids[scope]);
        return [Number(await r.get(`${p}:spent:${month}`)), Number(await r.get(`${p}:gpu:${month}`))];
      }),
    );
  const job = `job-${randomUUID()}`;
  const spend = { costMicros: 20_000, gpuSeconds: 1.5 };
  assert.equal(await addJobSpend(db, r, job, ids.key, spend, at), true);
  assert.equal(await addJobSpend(db, r, job, ids.key, spend, at), false, "a retry adds nothing");
  assert.deepEqual(await counters(), Array(4).fill([20_000, 1.5]));
  assert.equal(month, "2026-11");
  assert.ok((await r.ttl(`${limitPrefix("key", ids.key)}:spent:${month}`)) > 30 * 86400, "the counters outlive their month");
  // Another job adds again; a job that cost nothing adds nothing and leaves no marker.
  assert.equal(await addJobSpend(db, r, `job-${randomUUID()}`, ids.key, spend, at), true);
  const free = `job-${randomUUID()}`;
  assert.equal(await addJobSpend(db, r, free, ids.key, { costMicros: 0, gpuSeconds: 0 }, at), false);
  assert.equal(await r.exists(`llmgw:job-spend-added:${free}`), 0);
  assert.deepEqual(await counters(), Array(4).fill([40_000, 3]));
});
