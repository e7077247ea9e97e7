// The router against real sim engines over loopback: admission by band (503 and 504 with
// Retry-After, interactive before bulk), the breaker taking a dead replica out, the scrape
// filling in each replica's load, and a LoRA adapter kept off its base's outside provider. A
// small express app calls proxy() as the client API does, so these tests need no database, Redis
// or Temporal.
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { after, describe, it } from "node:test";
import express from "express";
import type { PrismaClient } from "../../common/db.ts";
import { startSim, type SimHandle } from "../../agent/engines/sim/server.ts";
import type { SimSettingsInput } from "../../agent/engines/sim/settings.ts";
import { ApiError } from "../../gateway/errors.ts";
import { sendOpenAIError } from "../../gateway/client-api/errors.ts";
import { DEFAULT_BANDS, type Band, type BandPolicy } from "../../gateway/router/admission.ts";
import { proxy } from "../../gateway/router/proxy.ts";
import { EndpointRegistry } from "../../gateway/router/registry.ts";
import { engineKey } from "../../common/engine-key.ts";
import { startOutsideProvider } from "../helpers/outside-provider.ts";

const MODEL = "router-sim";
const CLUSTER_TOKEN = "router-test-cluster-token";

interface Gateway {
  url: string;
  registry: EndpointRegistry;
  close(): Promise<void>;
}

/** Sims with the given settings, and a gateway routing MODEL over them (plus any dead URLs). */
async function start(
  sims: Partial<SimSettingsInput>[],
  opts: { bands?: Record<Band, BandPolicy>; slots?: number; dead?: string[]; providers?: object[]; adapter?: string } = {},
): Promise<Gateway> {
  const engines: SimHandle[] = [];
  // Each keyed as the agent keys a replica: the router must send the key of the replica it picks.
  for (const [i, s] of sims.entries()) engines.push(await startSim({ port: 0, host: "127.0.0.1", model: MODEL, apiKey: engineKey(CLUSTER_TOKEN, `r${i}`), ...s }));
  const urls = [...engines.map((e) => `http://127.0.0.1:${e.port}`), ...(opts.dead ?? [])];
  const rows = urls.map((url, i) => ({ id: `r${i}`, modelName: MODEL, version: { version: "1" }, nodeId: "n", url }));
  const db = {
    replica: { findMany: async () => rows },
    model: { findMany: async () => [{ name: MODEL, providers: opts.providers ?? null }] },
    modelAdapter: { findMany: async () => (opts.adapter ? [{ name: opts.adapter, modelName: MODEL, createdAt: new Date() }] : []) },
  } as unknown as PrismaClient;
  const registry = new EndpointRegistry(db, { engineKey: (id) => engineKey(CLUSTER_TOKEN, id), replicaSlots: opts.slots ?? 1, bands: opts.bands, scrapeEveryMs: 60_000 });
  await registry.start();
  const app = express();
  app.use(express.json());
  app.post("/v1/chat/completions", (req, res) => {
    proxy(req, res, registry.endpoints((req.body as { model: string }).model), {
      path: "/v1/chat/completions",
      body: req.body as Record<string, unknown>,
      stream: false,
      clientWantsUsage: false,
      requestId: "t",
      started: performance.now(),
      band: req.header("x-test-band"),
    }).catch((err: unknown) => sendOpenAIError(res, err as ApiError));
  });
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    registry,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await registry.close();
      await Promise.all(engines.map((e) => e.close()));
    },
  };
}

function chat(g: Gateway, band: Band, maxTokens: number, extra: Record<string, string> = {}, model = MODEL): Promise<Response> {
  return fetch(`${g.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-test-band": band, ...extra },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], max_tokens: maxTokens }),
  });
}

/** Waits until the gateway has queued `n` requests of a band (no sleeping on a guess). */
async function queued(g: Gateway, band: Band, n: number): Promise<void> {
  const admission = g.registry.endpoints(MODEL)[0]!.group.admission;
  while (admission.waiting(band) < n) await new Promise((r) => setTimeout(r, 5));
}

const gateways: Gateway[] = [];
after(async () => {
  await Promise.all(gateways.map((g) => g.close()));
});

describe("admission by band, one sim with one slot", () => {
  // A slow answer (40 tokens at 20 a second) holds the only slot while the others queue.
  const slow = { slots: 1, tokensPerSecond: 20 };

  it("a full queue answers 503 with Retry-After; the queued request is served once the slot frees", async () => {
    const g = await start([slow], { bands: { ...DEFAULT_BANDS, bulk: { share: 1, maxWaitMs: 60_000, maxQueue: 1 } } });
    gateways.push(g);
    const holder = chat(g, "interactive", 40);
    await queuedOrRunning(g);
    const waiter = chat(g, "bulk", 2);
    await queued(g, "bulk", 1);
    const refused = await chat(g, "bulk", 2);
    assert.equal(refused.status, 503);
    assert.ok(Number(refused.headers.get("retry-after")) >= 1);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, "queue_full");
    assert.equal((await holder).status, 200);
    assert.equal((await waiter).status, 200);
  });

  it("a wait longer than the band's longest answers 504 with Retry-After", async () => {
    const g = await start([slow], { bands: { ...DEFAULT_BANDS, batch: { share: 1, maxWaitMs: 50, maxQueue: 10 } } });
    gateways.push(g);
    const holder = chat(g, "interactive", 40);
    await queuedOrRunning(g);
    const late = await chat(g, "batch", 2);
    assert.equal(late.status, 504);
    assert.ok(Number(late.headers.get("retry-after")) >= 1);
    assert.equal(((await late.json()) as { error: { code: string } }).error.code, "queue_timeout");
    assert.equal((await holder).status, 200);
  });

  it("interactive queued after bulk is served before it", async () => {
    const g = await start([{ slots: 1, tokensPerSecond: 100 }]);
    gateways.push(g);
    const order: string[] = [];
    const holder = chat(g, "interactive", 20);
    await queuedOrRunning(g);
    const bulk = chat(g, "bulk", 2).then((r) => order.push(`bulk ${r.status}`));
    await queued(g, "bulk", 1);
    const inter = chat(g, "interactive", 2).then((r) => order.push(`interactive ${r.status}`));
    await queued(g, "interactive", 1);
    await Promise.all([holder, bulk, inter]);
    assert.deepEqual(order, ["interactive 200", "bulk 200"]);
  });
});

/** The first request holds the only slot once the model's one replica has it in flight. */
async function queuedOrRunning(g: Gateway): Promise<void> {
  const e = g.registry.endpoints(MODEL)[0]!;
  while (e.inflight < 1) await new Promise((r) => setTimeout(r, 5));
}

describe("replica health", () => {
  it("a dead replica's breaker opens and every request is served by the live one", async () => {
    const g = await start([{}], { slots: 64, dead: ["http://127.0.0.1:1"] });
    gateways.push(g);
    for (let i = 0; i < 10; i++) assert.equal((await chat(g, "interactive", 2, { "x-llmgw-profile": "batch" })).status, 200);
    const dead = g.registry.endpoints(MODEL).find((e) => e.id === "r1")!;
    assert.equal(dead.breaker.state, "open");
    assert.equal(g.registry.endpoints(MODEL).find((e) => e.id === "r0")!.breaker.state, "closed");
  });

  it("the scrape reads each engine's queue; answers feed the smoothed TTFT; a bad profile is a 400", async () => {
    const g = await start([{ slots: 1, tokensPerSecond: 50 }], { slots: 4 });
    gateways.push(g);
    const e = g.registry.endpoints(MODEL)[0]!;
    const running = [chat(g, "interactive", 10), chat(g, "interactive", 10)];
    while (e.inflight < 2) await new Promise((r) => setTimeout(r, 5));
    await g.registry.scrapeNow();
    assert.ok(e.scrapedAt > 0);
    assert.equal(e.running + e.waiting, 2);
    assert.equal(e.kvCacheUsage, 1, "the sim's one slot is in use");
    for (const r of await Promise.all(running)) assert.equal(r.status, 200);
    assert.ok(e.ttft.get(Date.now()) > 0);
    const bad = await chat(g, "interactive", 2, { "x-llmgw-profile": "fastest" });
    assert.equal(bad.status, 400);
  });
});

describe("a LoRA adapter of a model that also has an outside provider", () => {
  it("goes to the base's own replicas only; the base itself may go outside", async () => {
    const upstream = await startOutsideProvider({ model: "gpt-outside" });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-router-"));
    const keysFile = path.join(dir, "acme.keys");
    fs.writeFileSync(keysFile, "sk-router-test 1000\n", { mode: 0o600 });
    const adapter = `${MODEL}-lora`;
    // The provider's key weighs a thousand times the replica, so the base goes outside nearly always.
    const g = await start([{}], { slots: 64, adapter, providers: [{ name: "acme", base_url: upstream.baseUrl, model: "gpt-outside", keys_file: keysFile }] });
    gateways.push(g);
    try {
      assert.ok(g.registry.endpoints(MODEL).some((e) => e.outside !== null), "the base has its outside provider");
      for (let i = 0; i < 20; i++) {
        const r = await chat(g, "interactive", 2, { "x-llmgw-profile": "batch" }, adapter);
        assert.equal(r.status, 200);
        assert.equal(r.headers.get("x-llmgw-replica"), "r0");
        await r.body?.cancel();
      }
      assert.equal(upstream.models.length, 0, "the outside provider was never asked for the adapter");
      const base = await chat(g, "interactive", 2, { "x-llmgw-profile": "batch" });
      assert.equal(base.status, 200);
      await base.body?.cancel();
    } finally {
      await upstream.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
