// The cluster's job limit on the real Redis: separate processes (as separate workers) never hold
// more slots than the cap between them, acquiring is idempotent, and the slot of a process killed
// while holding one comes back once its lease runs out, with nobody releasing it.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { after, describe, it } from "node:test";
import { redis } from "../../common/redis.ts";
import { RedisSemaphore } from "../../common/redis-semaphore.ts";

const conn = redis();
after(() => conn.disconnect());

/** A separate process (a worker) that takes slots for `holders`, renewing them every 100 ms until killed. */
function holderProcess(key: string, cap: number, ttlMs: number, holders: string[]) {
  const code = `
    import { redis } from "./common/redis.ts";
    import { RedisSemaphore } from "./common/redis-semaphore.ts";
    const s = new RedisSemaphore(redis(), ${JSON.stringify(key)}, ${cap}, ${ttlMs});
    const got = [];
    for (const h of ${JSON.stringify(holders)}) if ((await s.acquire(h)).ok) got.push(h);
    console.log(JSON.stringify(got));
    setInterval(() => { for (const h of got) void s.acquire(h); }, 100);
  `;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { cwd: process.cwd(), stdio: ["ignore", "pipe", "inherit"] });
  const got = new Promise<string[]>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("\n")) resolve(JSON.parse(out.split("\n")[0]!) as string[]);
    });
    child.once("exit", (code) => reject(new Error(`holder process exited (${code}) before answering`)));
  });
  return { child, got, kill: () => new Promise<void>((r) => (child.once("exit", () => r()), child.kill("SIGKILL"))) };
}

describe("the cluster's job limit (a Redis semaphore with leases)", () => {
  it("holds at most cap slots, idempotently per holder; force goes past it; release frees one", async () => {
    const s = new RedisSemaphore(conn, `test:sem:${randomUUID()}`, 2, 10_000);
    assert.equal((await s.acquire("a")).ok, true);
    assert.equal((await s.acquire("a")).ok, true, "acquiring again renews, takes no second slot");
    assert.equal((await s.acquire("b")).ok, true);
    const refused = await s.acquire("c");
    assert.equal(refused.ok, false);
    assert.deepEqual(refused.holders.sort(), ["a", "b"]);
    assert.equal((await s.acquire("d", { force: true })).ok, true, "work already running is counted even past the cap");
    await s.release("d");
    await s.release("a");
    assert.equal((await s.acquire("c")).ok, true);
    assert.deepEqual((await s.holders()).sort(), ["b", "c"]);
  });

  it("two worker processes racing for 3 slots get 3 between them; a killed one's slots come back when its leases expire", async () => {
    const key = `test:sem:${randomUUID()}`;
    const w1 = holderProcess(key, 3, 1500, ["w1-a", "w1-b", "w1-c"]);
    const w2 = holderProcess(key, 3, 1500, ["w2-a", "w2-b", "w2-c"]);
    try {
      const [g1, g2] = await Promise.all([w1.got, w2.got]);
      assert.equal(g1.length + g2.length, 3, `slots taken: ${JSON.stringify([g1, g2])}`);
      const s = new RedisSemaphore(conn, key, 3, 1500);
      assert.equal((await s.acquire("late")).ok, false);
      const killed = g1.length ? w1 : w2;
      const itsSlots = g1.length ? g1 : g2;
      await killed.kill();
      // Its leases run out (1.5 s) with nobody releasing them; the other process keeps renewing.
      let held: string[] = [];
      for (let i = 0; i < 100; i++) {
        held = await s.holders();
        if (!itsSlots.some((h) => held.includes(h))) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(!itsSlots.some((h) => held.includes(h)), `the dead worker's slots expired (held: ${held.join(",")})`);
      assert.deepEqual(held.sort(), (g1.length ? g2 : g1).sort(), "the living worker's renewed leases stay");
      assert.equal((await s.acquire("late")).ok, true);
    } finally {
      for (const w of [w1, w2]) if (w.child.exitCode === null && w.child.signalCode === null) await w.kill();
    }
  });
});
