// Routing profiles on tables of replicas: which one pick chooses, and that it skips what it must.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Pool } from "undici";
import { Admission } from "../../gateway/router/admission.ts";
import { Affinity, prefixHash } from "../../gateway/router/affinity.ts";
import { Breaker } from "../../gateway/router/breaker.ts";
import { BusyClock } from "../../gateway/router/busy-clock.ts";
import { pick, type RouteHints } from "../../gateway/router/pick.ts";
import type { Endpoint, ModelGroup } from "../../gateway/router/endpoint.ts";
import { SmoothedTtft } from "../../gateway/router/ttft.ts";

const NOW = 1_000_000;

interface Row {
  id: string;
  inflight?: number;
  waiting?: number;
  kv?: number;
  ttft?: number;
  /** Seconds since the last scrape; Infinity = never scraped. */
  scrapedAgo?: number;
  open?: boolean;
  /** An outside key's weight; 1 (a replica) when absent. */
  weight?: number;
}

function table(rows: Row[]): Endpoint[] {
  const group: ModelGroup = { model: "m", endpoints: [], admission: new Admission(() => 0), affinity: new Affinity(), weights: null, weighted: rows.some((r) => (r.weight ?? 1) !== 1) };
  group.endpoints = rows.map((r) => {
    const ttft = new SmoothedTtft();
    if (r.ttft !== undefined) ttft.observe(r.ttft, NOW);
    const breaker = new Breaker(1, 60_000);
    if (r.open) breaker.failure(NOW);
    return {
      id: r.id,
      model: "m",
      version: "1",
      nodeId: "n",
      url: `http://${r.id}`,
      pool: null as unknown as Pool,
      inflight: r.inflight ?? 0,
      slots: 4,
      running: 0,
      waiting: r.waiting ?? 0,
      kvCacheUsage: r.kv ?? 0,
      scrapedAt: NOW - (r.scrapedAgo ?? 0) * 1000,
      ttft,
      breaker,
      group,
      weight: r.weight ?? 1,
      engineAuth: "",
      gpus: 0,
      busy: new BusyClock(),
      outside: null,
    };
  });
  return group.endpoints;
}

const hints = (h: Partial<RouteHints>): RouteHints => ({ profile: "chat", session: null, prefix: 0, ...h });
const none = new Set<string>();

describe("pick by routing profile", () => {
  const cases: { name: string; rows: Row[]; h: Partial<RouteHints>; want: string | null }[] = [
    { name: "batch: shortest queue (in flight + engine waiting)", rows: [{ id: "a", inflight: 1, waiting: 3 }, { id: "b", inflight: 2 }, { id: "c", inflight: 3 }], h: { profile: "batch" }, want: "b" },
    { name: "batch: stale engine figures are ignored", rows: [{ id: "a", inflight: 1, waiting: 9, scrapedAgo: 10 }, { id: "b", inflight: 2 }], h: { profile: "batch" }, want: "a" },
    { name: "long-context: most free KV cache", rows: [{ id: "a", kv: 0.9 }, { id: "b", kv: 0.2, inflight: 3 }, { id: "c", kv: 0.5 }], h: { profile: "long-context" }, want: "b" },
    { name: "long-context: equal KV, fewer in flight", rows: [{ id: "a", kv: 0.5, inflight: 2 }, { id: "b", kv: 0.5, inflight: 1 }], h: { profile: "long-context" }, want: "b" },
    { name: "chat: soonest answer, a slow idle replica loses to a fast busy one", rows: [{ id: "slow", ttft: 400 }, { id: "fast", ttft: 50, inflight: 2 }], h: {}, want: "fast" },
    { name: "chat: soonest answer, a fast replica with a long queue loses", rows: [{ id: "slow", ttft: 100 }, { id: "fast", ttft: 50, inflight: 2, waiting: 3 }], h: {}, want: "slow" },
    { name: "chat: an unmeasured replica counts as fast as the fastest", rows: [{ id: "known", ttft: 80, inflight: 1 }, { id: "new" }], h: {}, want: "new" },
    { name: "open breakers are skipped", rows: [{ id: "a", open: true }, { id: "b", inflight: 5 }], h: { profile: "batch" }, want: "b" },
    { name: "nothing usable: null", rows: [{ id: "a", open: true }], h: {}, want: null },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.equal(pick(table(c.rows), none, hints(c.h), null, NOW)?.id ?? null, c.want);
    });
  }

  it("chat: idle replicas whose TTFTs differ only by noise take turns", () => {
    const t = table([{ id: "a", ttft: 1.0 }, { id: "b", ttft: 1.4 }, { id: "c", ttft: 200 }]);
    const seen = new Map<string, number>();
    for (let i = 0; i < 6; i++) {
      const id = pick(t, none, hints({}), null, NOW)!.id;
      seen.set(id, (seen.get(id) ?? 0) + 1);
    }
    assert.deepEqual([...seen.keys()].sort(), ["a", "b"], "the slow replica is left out, the two fast ones share");
  });

  it("skips replicas already tried for this request", () => {
    const t = table([{ id: "a" }, { id: "b", inflight: 3 }]);
    assert.equal(pick(t, new Set(["a"]), hints({ profile: "batch" }), null, NOW)?.id, "b");
  });

  it("equal replicas take turns", () => {
    const t = table([{ id: "a" }, { id: "b" }, { id: "c" }]);
    const seen = new Set<string>();
    for (let i = 0; i < 3; i++) seen.add(pick(t, none, hints({ profile: "batch" }), null, NOW)!.id);
    assert.equal(seen.size, 3);
  });
});

describe("chat affinity", () => {
  it("a session goes where it was last served, even when another replica is less busy", () => {
    const t = table([{ id: "a", inflight: 2 }, { id: "b" }]);
    const aff = new Affinity();
    aff.served("s1", 0, "a");
    assert.equal(pick(t, none, hints({ session: "s1" }), aff, NOW)?.id, "a");
    assert.equal(pick(t, none, hints({ session: "s2" }), aff, NOW)?.id, "b", "an unknown session is routed by load");
  });

  it("a prompt prefix goes where it was last served; the session wins over it", () => {
    const t = table([{ id: "a", inflight: 1 }, { id: "b", inflight: 1 }, { id: "c" }]);
    const aff = new Affinity();
    aff.served(null, 42, "b");
    aff.served("s", 0, "a");
    assert.equal(pick(t, none, hints({ prefix: 42 }), aff, NOW)?.id, "b");
    assert.equal(pick(t, none, hints({ prefix: 42, session: "s" }), aff, NOW)?.id, "a");
  });

  it("affinity gives way when its replica is full, queueing, or its breaker is open", () => {
    for (const row of [{ inflight: 4 }, { waiting: 1 }, { open: true }]) {
      const t = table([{ id: "a", ...row }, { id: "b", inflight: 1 }]);
      const aff = new Affinity();
      aff.served("s", 0, "a");
      assert.equal(pick(t, none, hints({ session: "s" }), aff, NOW)?.id, "b", JSON.stringify(row));
    }
  });

  it("batch and long-context ignore affinity", () => {
    const t = table([{ id: "a", inflight: 2 }, { id: "b" }]);
    const aff = new Affinity();
    aff.served("s", 0, "a");
    assert.equal(pick(t, none, hints({ profile: "batch", session: "s" }), aff, NOW)?.id, "b");
  });

  it("the prefix hash reads only the prompt's beginning", () => {
    const long = "x".repeat(300);
    const a = prefixHash({ messages: [{ role: "user", content: long + "tail one" }] });
    const b = prefixHash({ messages: [{ role: "user", content: long + "tail two" }] });
    const c = prefixHash({ messages: [{ role: "user", content: "y" + long }] });
    assert.equal(a, b);
    assert.notEqual(a, c);
    assert.equal(prefixHash({ messages: [] }), 0);
    assert.equal(prefixHash({ prompt: "hello" }), prefixHash({ messages: [{ role: "user", content: [{ type: "text", text: "hello" }] }] }));
  });

  it("forgets the oldest entries beyond its size", () => {
    const aff = new Affinity(2);
    aff.served("s1", 0, "a");
    aff.served("s2", 0, "a");
    aff.served("s1", 0, "b"); // s1 is now the newest
    aff.served("s3", 0, "c");
    assert.equal(aff.session("s2"), undefined);
    assert.equal(aff.session("s1"), "b");
    assert.equal(aff.session("s3"), "c");
  });
});

describe("weighted endpoints (outside keys)", () => {
  it("equally good endpoints are chosen in proportion to their weights", () => {
    const rows = table([{ id: "heavy", weight: 3 }, { id: "light", weight: 1 }]);
    let heavy = 0;
    for (let i = 0; i < 4000; i++) if (pick(rows, none, hints({}), null, NOW)!.id === "heavy") heavy++;
    // 3:1 expects 3000; five standard deviations (~27 each) either side.
    assert.ok(heavy > 2860 && heavy < 3140, `heavy chosen ${heavy} of 4000`);
  });

  it("load counts against the weight: the heavier key takes more in flight before the other wins", () => {
    const rows = table([{ id: "heavy", weight: 4, inflight: 3 }, { id: "light", weight: 1, inflight: 1 }]);
    assert.equal(pick(rows, none, hints({ profile: "batch" }), null, NOW)!.id, "heavy");
    rows[0]!.inflight = 5;
    assert.equal(pick(rows, none, hints({ profile: "batch" }), null, NOW)!.id, "light");
  });

  it("a key held by its breaker (429 with Retry-After) is passed over until the hold ends", () => {
    const rows = table([{ id: "a", weight: 2 }, { id: "b", weight: 1 }]);
    rows[0]!.breaker.hold(NOW, 30_000);
    for (let i = 0; i < 20; i++) assert.equal(pick(rows, none, hints({}), null, NOW + 29_000)!.id, "b");
    assert.ok(rows[0]!.breaker.allows(NOW + 30_000), "one probe after the hold");
    rows[1]!.breaker.hold(NOW, Infinity);
    assert.equal(pick(rows, none, hints({}), null, NOW + 10 ** 9)!.id, "a", "a refused key stays out");
  });
});
