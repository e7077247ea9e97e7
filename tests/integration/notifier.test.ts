// Raising notifications on the real Redis (common/notifier.ts): two processes raising the same kind
// and subject make one notification (BullMQ's deduplication), and one process raising it again and
// again within the hour goes to Redis once.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, describe, it } from "node:test";
import { config } from "../../common/config.ts";
import { Notifier, raise, setNotifier } from "../../common/notifier.ts";
import { redis } from "../../common/redis.ts";

describe("notifier", () => {
  const conns = [redis(config().redisUrl), redis(config().redisUrl)];
  const [a, b] = conns.map((c) => new Notifier(c));
  const ids: string[] = [];
  const subject = () => `node-${randomBytes(4).toString("hex")}`;
  const jobsOf = async (s: string) => (await a!.queue.getJobs(["waiting", "active", "delayed", "completed", "failed", "prioritized"])).filter((j) => j.data.subject === s);
  after(async () => {
    setNotifier(null);
    for (const id of ids) await (await a!.queue.getJob(id))?.remove();
    await Promise.all([a!.close(), b!.close()]);
    for (const c of conns) c.disconnect();
  });

  it("the same kind and subject from two processes within the hour is one notification", async () => {
    const s = subject();
    const n = { kind: "node_lost" as const, subject: s, summary: `node ${s} unheard` };
    const first = await a!.add(n);
    const second = await b!.add(n);
    ids.push(first, second);
    assert.equal(second, first, "the second raise names the first one's job");
    assert.equal((await jobsOf(s)).length, 1);
    const other = await b!.add({ ...n, subject: `${s}-other` });
    ids.push(other);
    assert.notEqual(other, first, "another subject is another notification");
    const test = await a!.add({ kind: "test", subject: s, summary: "a test" }, { dedupe: false });
    const again = await a!.add({ kind: "test", subject: s, summary: "a test" }, { dedupe: false });
    ids.push(test, again);
    assert.notEqual(again, test, "without dedupe every add is sent");
  });

  it("raise sends a repeat within the hour to Redis no more, and one after it again", async () => {
    setNotifier(a!);
    let sent = 0;
    const add = a!.add.bind(a);
    a!.add = (...args) => (sent++, add(...args));
    const s = subject();
    const now = Date.now();
    for (let i = 0; i < 5; i++) raise({ kind: "budget_spent", subject: s, summary: `budget of ${s} spent` }, now + i * 1000);
    const jobs = await waitForJobs(s, 1);
    ids.push(...jobs.map((j) => j.id!));
    assert.equal(sent, 1);
    assert.equal(jobs.length, 1);
    assert.equal(jobs[0]!.data.kind, "budget_spent");
    raise({ kind: "budget_spent", subject: s, summary: `budget of ${s} spent` }, now + 3_600_000);
    assert.equal(sent, 2, "an hour later it is raised again (the queue decides by its own clock)");
  });

  it("refuses a notification of a kind it does not know, and raise only logs it", async () => {
    await assert.rejects(a!.add({ kind: "nope" as never, subject: "x", summary: "y" }), /kind/);
    const s = subject();
    raise({ kind: "nope" as never, subject: s, summary: "never queued" });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await jobsOf(s)).length, 0);
  });

  async function waitForJobs(s: string, n: number) {
    for (let i = 0; i < 50; i++) {
      const jobs = await jobsOf(s);
      if (jobs.length >= n) {
        await new Promise((r) => setTimeout(r, 300)); // and no more come
        return jobsOf(s);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    return jobsOf(s);
  }
});
