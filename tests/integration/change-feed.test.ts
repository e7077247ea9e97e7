// The change feed on a real Redis: a platform hears its own database's changes and not those of
// another platform that shares the server on another database (pub/sub spans databases).
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, it } from "node:test";
import type { Redis } from "ioredis";
import { CHANGE_CHANNEL, changeChannel, publishChange, subscribeChanges, type Change } from "../../common/change-feed.ts";
import { redis } from "../../common/redis.ts";

const server = new URL(process.env.REDIS_URL ?? "redis://127.0.0.1:6380");
const on = (db: number): Redis => {
  const u = new URL(server.href);
  u.pathname = `/${db}`;
  return redis(u.toString());
};
const open: Redis[] = [];
const conn = (db: number) => {
  const r = on(db);
  open.push(r);
  return r;
};
after(() => {
  for (const r of open) r.disconnect();
});

it("keeps database 0 on the plain channel and gives every other database its own", () => {
  assert.equal(changeChannel(conn(0)), CHANGE_CHANNEL);
  assert.equal(changeChannel(conn(7)), `${CHANGE_CHANNEL}:7`);
});

it("delivers a change to subscribers of the publisher's database only", async () => {
  const heard: Record<string, string[]> = { a: [], b: [] };
  await subscribeChanges(conn(5), (c) => c.kind === "key" && heard.a!.push(c.hash), () => undefined);
  await subscribeChanges(conn(6), (c) => c.kind === "key" && heard.b!.push(c.hash), () => undefined);
  const mark = (hash: string): Change => ({ kind: "key", op: "revoked", hash });
  const forA = randomUUID();
  const forB = randomUUID();
  await publishChange(conn(5), mark(forA));
  await publishChange(conn(6), mark(forB));
  for (let i = 0; i < 100 && (heard.a!.length < 1 || heard.b!.length < 1); i++) await new Promise((r) => setTimeout(r, 20));
  // A last message on each, so a stray one from the other database would have arrived by now.
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(heard, { a: [forA], b: [forB] });
});
