// The limiter on the real Redis: two limiters (as two gateways) share windows, slots and budgets;
// the tightest level applies; Retry-After on rates, none on a spent budget; leases admit most
// requests of a large limit without a round trip, never past the limit, and give back what they did
// not use; a lease whose gateway died frees its slots when it lapses; and with Redis away each
// process still limits on its own without failing a request.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, describe, it } from "node:test";
import { Registry } from "prom-client";
import { waitFor } from "../../common/children.ts";
import { redis } from "../../common/redis.ts";
import type { KeyInfo } from "../../gateway/auth/key-cache.ts";
import type { LimitBook, ScopeLimits } from "../../gateway/auth/limit-book.ts";
import { ADMIT_LUA, SETTLE_LUA } from "../../gateway/auth/limit-script.ts";
import { LEASE_MS } from "../../gateway/auth/limit-lease.ts";
import { Limiter } from "../../gateway/auth/limiter.ts";

const fast = { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 250 } as const;
const conns = [redis(undefined, fast), redis(undefined, fast)];
after(() => conns.forEach((c) => c.disconnect()));

function keyInfo(): KeyInfo {
  return { id: randomUUID(), projectId: randomUUID(), teamId: randomUUID(), orgId: randomUUID(), models: [], band: "interactive", expiresAt: null, revoked: false };
}
const limits = (key: KeyInfo, scope: ScopeLimits["scope"], l: Partial<ScopeLimits>): ScopeLimits => ({
  scope,
  scopeId: scope === "key" ? key.id : scope === "project" ? key.projectId : scope === "team" ? key.teamId : key.orgId,
  rpm: null,
  tpm: null,
  concurrent: null,
  monthlyBudgetMicros: null,
  monthlyBudgetGpuSeconds: null,
  ...l,
});
const book = (rows: ScopeLimits[]) => ({ forKey: () => rows }) as unknown as LimitBook;
const nothing = { promptTokens: 0, completionTokens: 0, costMicros: 0 };

/** Slots the scope's live leases hold in Redis: one per lease, plus the rest of each larger lease's (gateway/auth/limit-script.ts). */
const holding = async (prefix: string) => (await conns[1]!.zcard(`${prefix}:leases`)) + Number((await conns[1]!.hget(`${prefix}:held`, "*")) ?? 0);

async function ready(): Promise<void> {
  for (const c of conns) if (c.status !== "ready") await new Promise((r) => c.once("ready", r));
}

describe("limits counted in Redis, shared by every gateway", () => {
  it("requests per minute hold across two gateways, with Retry-After", async () => {
    await ready();
    const key = keyInfo();
    const b = book([limits(key, "project", { rpm: 5 })]);
    const [a, c] = [new Limiter(conns[0]!, b, new Registry()), new Limiter(conns[1]!, b, new Registry())];
    for (let i = 0; i < 3; i++) assert.equal((await a.admit(key)).refused, null);
    for (let i = 0; i < 2; i++) assert.equal((await c.admit(key)).refused, null);
    const refused = (await c.admit(key)).refused;
    assert.equal(refused?.status, 429);
    assert.equal(refused?.opts.code, "rate_limit_exceeded");
    assert.ok(refused!.opts.retryAfterS! >= 1 && refused!.opts.retryAfterS! <= 120, `retry after ${refused!.opts.retryAfterS}`);
    assert.match(refused!.message, /project's requests per minute/);
  });

  it("the tightest level applies", async () => {
    const key = keyInfo();
    const l = new Limiter(conns[0]!, book([limits(key, "org", { rpm: 100 }), limits(key, "project", { rpm: 10 }), limits(key, "key", { rpm: 2 })]), new Registry());
    assert.equal((await l.admit(key)).refused, null);
    assert.equal((await l.admit(key)).refused, null);
    assert.match((await l.admit(key)).refused!.message, /key's requests per minute/);
  });

  it("concurrent requests: a slot is freed when the request ends", async () => {
    const key = keyInfo();
    const b = book([limits(key, "key", { concurrent: 2 })]);
    const [a, c] = [new Limiter(conns[0]!, b, new Registry()), new Limiter(conns[1]!, b, new Registry())];
    const first = await a.admit(key);
    assert.equal((await c.admit(key)).refused, null);
    const third = (await c.admit(key)).refused;
    assert.match(third!.message, /concurrent/);
    assert.equal(third!.opts.retryAfterS, 1);
    first.release(nothing);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal((await a.admit(key)).refused, null);
  });

  it("tokens per minute count what requests used", async () => {
    const key = keyInfo();
    const l = new Limiter(conns[0]!, book([limits(key, "team", { tpm: 100 })]), new Registry());
    const one = await l.admit(key);
    assert.equal(one.refused, null);
    one.release({ promptTokens: 60, completionTokens: 40, costMicros: 0 });
    await new Promise((r) => setTimeout(r, 50));
    const refused = (await l.admit(key)).refused;
    assert.match(refused!.message, /tokens per minute/);
    assert.ok(refused!.opts.retryAfterS! >= 1);
  });

  it("a spent monthly budget refuses with 429 and no Retry-After", async () => {
    const key = keyInfo();
    const l = new Limiter(conns[0]!, book([limits(key, "project", { monthlyBudgetMicros: 1_000 })]), new Registry());
    const one = await l.admit(key);
    one.release({ promptTokens: 1, completionTokens: 1, costMicros: 600 });
    const two = await l.admit(key);
    assert.equal(two.refused, null, "600 of 1000 spent");
    two.release({ promptTokens: 1, completionTokens: 1, costMicros: 600 });
    await new Promise((r) => setTimeout(r, 50));
    const refused = (await l.admit(key)).refused;
    assert.equal(refused?.status, 429);
    assert.equal(refused?.opts.code, "budget_exceeded");
    assert.equal(refused?.opts.retryAfterS, undefined);
  });

  it("a spent GPU budget refuses as the money budget does, across two gateways, counting fractions", async () => {
    const key = keyInfo();
    const b = book([limits(key, "team", { monthlyBudgetGpuSeconds: 1 })]);
    const [a, c] = [new Limiter(conns[0]!, b, new Registry()), new Limiter(conns[1]!, b, new Registry())];
    (await a.admit(key)).release({ ...nothing, gpuSeconds: 0.375 });
    (await c.admit(key)).release({ ...nothing, gpuSeconds: 0.375 });
    await new Promise((r) => setTimeout(r, 250)); // both sent (every 100 ms)
    const third = await a.admit(key);
    assert.equal(third.refused, null, "0.75 of 1 GPU-second spent");
    third.release({ ...nothing, gpuSeconds: 0.375 });
    // Past the leases taken meanwhile: a lease sees another gateway's spend when it is renewed, as for money.
    await new Promise((r) => setTimeout(r, LEASE_MS + 250));
    for (const l of [a, c]) {
      const refused = (await l.admit(key)).refused;
      assert.equal(refused?.status, 429);
      assert.equal(refused?.opts.code, "budget_exceeded");
      assert.equal(refused?.opts.retryAfterS, undefined);
      assert.match(refused!.message, /team's monthly GPU budget is spent/);
    }
  });

  it("a large limit is admitted on leases: few round trips, never past the limit across two gateways", async () => {
    const key = keyInfo();
    const b = book([limits(key, "key", { rpm: 100 })]); // leases of 2
    const [a, c] = [new Limiter(conns[0]!, b, new Registry()), new Limiter(conns[1]!, b, new Registry())];
    let admitted = 0;
    for (let i = 0; i < 150; i++) if ((await (i % 2 ? c : a).admit(key)).refused === null) admitted++;
    assert.equal(admitted, 100, "every request the limit allows, and not one more");
    const big = keyInfo();
    const metrics = new Registry();
    const l = new Limiter(conns[0]!, book([limits(big, "key", { rpm: 1_000_000 })]), metrics); // leases of 256
    for (let i = 0; i < 1_000; i++) assert.equal((await l.admit(big)).refused, null);
    const asked = Number(/llmgw_limits_redis_admissions_total (\d+)/.exec(await metrics.metrics())![1]);
    assert.ok(asked >= 4 && asked <= 10, `1000 admissions under a large limit asked Redis ${asked} times`);
  });

  it("a large limit's next lease is taken before the current one runs out: requests stop waiting on Redis", async () => {
    const key = keyInfo();
    const l = new Limiter(conns[0]!, book([limits(key, "key", { rpm: 1_000_000, concurrent: 100_000 })]), new Registry()); // leases of 256
    const started = Math.floor(Date.now() / 60_000);
    let waited = 0;
    const held = [];
    const n = 1200; // about five leases of 256: asking only when one is spent, five would wait
    for (let i = 0; i < n; i++) {
      // Admitted on a lease, it is answered within a few microtasks; an answer from Redis needs the
      // event loop to read a socket, which cannot happen while only microtasks run.
      const admission = l.admit(key);
      let answered = false;
      void admission.then(() => (answered = true));
      for (let tick = 0; tick < 20 && !answered; tick++) await Promise.resolve();
      if (!answered) waited++;
      const got = await admission;
      assert.equal(got.refused, null);
      held.push(got);
      await new Promise((r) => setTimeout(r, 1)); // requests arrive over time, as over sockets
    }
    // The first waits; a second only if a renewal's round trip outlasted a quarter of a lease (a
    // stalled machine), never one per lease.
    assert.ok(waited >= 1 && waited <= 2, `${waited} of ${n} admissions waited on Redis`);
    for (const h of held) h.release(nothing);
    await l.close();
    // What the leases reserved and did not use went back: Redis counts those admitted, no more.
    const prefix = `llmgw:lim:key:${key.id}`;
    let counted = 0;
    for (let b = started; b <= Math.floor(Date.now() / 60_000); b++) counted += Number((await conns[1]!.get(`${prefix}:rpm:${b}`)) ?? 0);
    assert.equal(counted, n);
    assert.equal(await holding(prefix), 0, "every slot freed");
    assert.equal(await conns[1]!.zcard(`${prefix}:leases`), 0, "and no lease holds any");
  });

  it("a renewal Redis refuses is not asked again by each request the lease still admits", async () => {
    await ready();
    const key = keyInfo();
    const b = book([limits(key, "key", { rpm: 1_000 })]); // leases of 20
    const metrics = new Registry();
    const [a, c] = [new Limiter(conns[0]!, b, metrics), new Limiter(conns[1]!, b, new Registry())];
    assert.equal((await a.admit(key)).refused, null); // a's lease of 20, one used
    let other = 0;
    while ((await c.admit(key)).refused === null) other++; // the other gateway takes the rest of the minute
    assert.equal(other, 980);
    // a's lease admits its other 19; from 5 left on, its renewal is due, and Redis refuses it.
    for (let i = 0; i < 19; i++) {
      assert.equal((await a.admit(key)).refused, null);
      await new Promise((r) => setTimeout(r, 5)); // time for a renewal's answer before the next
    }
    assert.equal((await a.admit(key)).refused?.status, 429, "spent: the request asks and is refused");
    const asked = Number(/llmgw_limits_redis_admissions_total (\d+)/.exec(await metrics.metrics())![1]);
    assert.equal(asked, 3, "the first lease, one renewal ahead, and the request that found the lease spent");
    await Promise.all([a.close(), c.close()]);
  });

  it("slots are freed at the scope that limits them, whichever of the key's scopes that is", async () => {
    // The team limits concurrency and the org only rates, so the team's slots are at the second of
    // the key's four scopes (the settle script's KEYS), as a lease of one and as a lease of four.
    for (const [concurrent, lease] of [[2, 1], [200, 4]] as const) {
      const key = keyInfo();
      const l = new Limiter(conns[0]!, book([limits(key, "org", { rpm: 100_000 }), limits(key, "team", { concurrent })]), new Registry());
      const team = `llmgw:lim:team:${key.teamId}`;
      const got = await l.admit(key);
      assert.equal(got.refused, null);
      assert.equal(await holding(team), lease, `a lease of ${lease} holds its slots at the team`);
      got.release(nothing);
      await l.close();
      assert.equal(await holding(team), 0, `a lease of ${lease} freed its slots`);
    }
  });

  it("a lease's unused requests and free slots go back to Redis once it lapses", async () => {
    const key = keyInfo();
    const l = new Limiter(conns[0]!, book([limits(key, "key", { rpm: 1_000, concurrent: 500 })]), new Registry()); // leases of 10
    const bucket = Math.floor(Date.now() / 60_000);
    const one = await l.admit(key);
    assert.equal(one.refused, null);
    const prefix = `llmgw:lim:key:${key.id}`;
    const rpm = async () => Number((await conns[1]!.get(`${prefix}:rpm:${bucket}`)) ?? 0);
    assert.equal(await rpm(), 10, "the lease reserved ten requests");
    assert.equal(await holding(prefix), 10, "and ten slots");
    // The limiter gives an unused lease back on its own timer: wait for it, not for a guess of it.
    await waitFor("the nine unused requests given back", async () => (await rpm()) === 1, 15_000, 50);
    assert.equal(await holding(prefix), 1, "and the nine free slots; the request's own is still held");
    one.release(nothing);
    await l.close();
    assert.equal(await holding(prefix), 0, "its slot is freed when it ends");
  });

  it("slots on leases: never more requests at once than the limit across two gateways", async () => {
    const key = keyInfo();
    const b = book([limits(key, "key", { concurrent: 200 })]); // leases of 4
    const [a, c] = [new Limiter(conns[0]!, b, new Registry()), new Limiter(conns[1]!, b, new Registry())];
    const held = [];
    for (let i = 0; i < 250; i++) {
      const got = await (i % 2 ? c : a).admit(key);
      if (got.refused === null) held.push(got);
    }
    assert.equal(held.length, 200);
    for (const h of held) h.release(nothing);
    assert.equal((await a.admit(key)).refused, null, "freed slots admit again");
  });

  it("the slots of a lease whose gateway died are freed when it lapses, and not twice", async () => {
    // The scripts straight, with a lapse of 200 ms (the limiter's is 15 minutes).
    const r = conns[0]! as typeof conns[0] & Record<"testAdmit" | "testSettle", (...a: (string | number)[]) => Promise<(string | number)[]>>;
    r.defineCommand("testAdmit", { lua: ADMIT_LUA });
    r.defineCommand("testSettle", { lua: SETTLE_LUA });
    await ready();
    const prefix = `llmgw:lim:key:${randomUUID()}`;
    // rpm, tpm: none; 5 at once; no budget. Wanting 10, a lease gets the 5 there are.
    const admit = (id: string, want: number) => r.testAdmit(1, prefix, Date.now(), 60_000, id, 200, "2026-12", want, -1, -1, 5, -1, -1);
    // Each lease here holds more than one slot at the one scope: '2' (limit-script.ts).
    const settle = (id: string, slots: number) => r.testSettle(1, prefix, Date.now(), 60_000, 0, 0, "2026-12", 0, 0, 0, id, slots, "2");
    assert.deepEqual((await admit("dies", 10)).slice(0, 2), [1, 5]);
    assert.deepEqual((await admit("waits", 1)).slice(0, 3), [0, 1, "concurrent"], "all five are held");
    await new Promise((res) => setTimeout(res, 250));
    assert.deepEqual((await admit("next", 2)).slice(0, 2), [1, 2], "the lapsed lease's slots are free again");
    assert.equal(await holding(prefix), 2);
    assert.equal(await conns[1]!.hget(`${prefix}:held`, "dies"), null, "its four past the first went with it");
    await settle("dies", 5); // a late give-back from the lapsed lease frees nothing more
    assert.equal(await holding(prefix), 2);
    assert.deepEqual((await admit("wide", 10)).slice(0, 2), [1, 3], "the three left");
    await settle("wide", 1);
    assert.equal(await holding(prefix), 4, "one of its three given back");
    await settle("next", 1);
    assert.equal(await holding(prefix), 3, "one of the two given back");
    await settle("next", 1);
    await settle("wide", 2);
    assert.equal(await holding(prefix), 0);
    assert.equal(await conns[1]!.zcard(`${prefix}:leases`), 0, "a lease with no slots left is gone");
    assert.equal(await conns[1]!.hlen(`${prefix}:held`), 1, "and so is what it held past its first; the sum is 0");
    assert.deepEqual((await admit("one", 1)).slice(0, 2), [1, 1]);
    await r.testSettle(1, prefix, Date.now(), 60_000, 0, 0, "2026-12", 0, 0, 0, "one", 1, "1");
    assert.equal(await holding(prefix), 0, "a lease of one goes with its slot");
  });

  it("with Redis unreachable, limits hold per process, a metric counts it and no request fails", async () => {
    const dead = redis("redis://127.0.0.1:1", { ...fast, retryStrategy: () => null, lazyConnect: true });
    dead.on("error", () => undefined);
    const key = keyInfo();
    const metrics = new Registry();
    const l = new Limiter(dead, book([limits(key, "key", { rpm: 2, concurrent: 5 })]), metrics);
    const a = await l.admit(key);
    assert.equal(a.refused, null);
    a.release(nothing);
    assert.equal((await l.admit(key)).refused, null);
    assert.match((await l.admit(key)).refused!.message, /requests per minute/);
    await new Promise((r) => setTimeout(r, 50));
    assert.match(await metrics.metrics(), /llmgw_limits_local_fallback_total\{op="admit"\} 3/);
    dead.disconnect();
  });
});
