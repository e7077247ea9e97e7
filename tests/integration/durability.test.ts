// Operations finish whatever crashes meanwhile. While a serve (a scale-up), a rolling upgrade and a
// canary each wait for their new engines, the Temporal worker, an agent, the gateway and the
// Temporal server itself are killed in turn (SIGKILL) and started again; each time the operation
// completes, exactly the wanted engines of the wanted version run, and a load through the gateway
// sees no failure except while the gateway itself is down. The Temporal server is one of this
// file's own, so its outage touches no other test.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { waitFor } from "../../common/children.ts";
import { startPlatform, uniqueModel, type Platform, type ProcessName } from "../helpers/platform.ts";
import { startThrowawayTemporal, type ThrowawayTemporal } from "../helpers/temporal.ts";

const REPLICAS = 2;

/** One kind of operation: how to start it towards `target`, and what the model has after it. */
interface Operation {
  kind: "serve" | "upgrade" | "canary";
  start(p: Platform, model: string, target: string): Promise<string>;
  /** Replicas and version once it completed; `afterwards` puts the model back to REPLICAS. */
  replicas: number;
  afterwards?(p: Platform, model: string): Promise<void>;
}

/** Engines that take 4 s to load, so the operation surely waits for them when the crash comes. */
const slow = { engine: "sim", args: ["--load-delay-ms", "4000"] };

const operations: Operation[] = [
  {
    kind: "serve",
    // A scale-up of the version already served: the new replica loads slowly.
    start: async (p, model, _target) => (await p.admin<{ operationId: string }>("POST", `/models/${model}/serve`, { ...slow, version: current.get(model)!, replicas: REPLICAS + 1 })).operationId,
    replicas: REPLICAS + 1,
    afterwards: async (p, model) => {
      assert.equal((await p.ctl(["model", "scale", model, "--replicas", String(REPLICAS), "--wait"])).code, 0);
    },
  },
  {
    kind: "upgrade",
    start: async (p, model, target) => (await p.admin<{ operationId: string }>("POST", `/models/${model}/upgrade`, { ...slow, version: target, wave: 1 })).operationId,
    replicas: REPLICAS,
  },
  {
    kind: "canary",
    // Its windows start once the canary replica is ready; a healthy sim is promoted. Latency is not
    // what this test judges (a just-restarted process answers its first requests slower). A window
    // counts the usage ledger, which trails the requests by the gateway's batching and the usage
    // worker: 5 s windows, so a busy machine's ledger still lands in them.
    start: async (p, model, target) =>
      (await p.admin<{ operationId: string }>("POST", `/models/${model}/canary`, { ...slow, version: target, weight: 30, for: "10s", window: "5s", minRequests: 1, maxLatencyRatio: 20 })).operationId,
    replicas: REPLICAS,
  },
];

/** The version each model serves now. */
const current = new Map<string, string>();

async function restart(p: Platform, process: ProcessName): Promise<void> {
  await p.kill(process);
  await p.start(process);
}

let temporal: ThrowawayTemporal;
before(async () => {
  temporal = await startThrowawayTemporal();
});
after(() => temporal?.destroy());

const crashes: { name: string; gatewayDown?: boolean; run(p: Platform): Promise<void> }[] = [
  { name: "its Temporal worker being killed", run: (p) => restart(p, "worker-temporal") },
  { name: "the agent being killed (its engines keep serving and are adopted)", run: (p) => restart(p, "agent") },
  { name: "the gateway being killed", gatewayDown: true, run: (p) => restart(p, "gateway") },
  { name: "the Temporal server being killed and restarted on its file", run: async () => temporal.kill(2) },
];

for (const op of operations) {
  describe(`durability of a ${op.kind}`, () => {
    let p: Platform;
    let key: string;
    const model = uniqueModel(`durable-${op.kind}`);
    let version = 1;

    before(async () => {
      p = await startPlatform({ env: { TEMPORAL_ADDRESS: temporal.address } });
      await p.ctl(["projects", "create", "dur"]);
      key = (JSON.parse((await p.ctl(["keys", "create", "--project", "dur", "--json"])).stdout) as { key: string }).key;
      assert.equal((await p.ctl(["model", "serve", model, "--engine", "sim", "--version", "v1", "--replicas", String(REPLICAS), "--wait"])).code, 0);
      current.set(model, "v1");
    });
    after(async () => {
      await p?.stop();
    });

    /** Runs the operation towards the next version; `crash` runs while it waits for its new engines. */
    async function through(crash: (p: Platform) => Promise<void>, opts: { gatewayDown?: boolean } = {}) {
      const target = op.kind === "serve" ? current.get(model)! : `v${++version}`;
      const client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, maxRetries: 0 });
      let going = true;
      let gatewayDown = false;
      const failures: string[] = [];
      let sent = 0;
      const load = (async () => {
        while (going) {
          sent++;
          const down = gatewayDown;
          try {
            await client.chat.completions.create({ model, messages: [{ role: "user", content: `d${sent}` }], max_tokens: 2 });
          } catch (err) {
            if (!down && !gatewayDown) failures.push((err as Error).message);
            else await new Promise((r) => setTimeout(r, 100));
          }
        }
      })();
      const operationId = await op.start(p, model, target);
      await waitFor(`the ${op.kind} to wait for a new engine`, async () => {
        const o = await p.admin<{ progress: { phase: string } | null }>("GET", `/operations/${operationId}`);
        return o.progress?.phase === "waiting-ready";
      }, 60_000, 100);
      if (opts.gatewayDown) gatewayDown = true;
      await crash(p);
      if (opts.gatewayDown) {
        await waitFor("the gateway to answer again", async () => (await fetch(`${p.adminUrl}/health`)).ok, 60_000);
        gatewayDown = false;
      }
      const final = await waitFor(`the ${op.kind} to finish`, async () => {
        const o = await p.admin<{ status: string; error: string | null; progress: { canary?: { decision: { decision: string; reason: string } | null } } | null }>("GET", `/operations/${operationId}`).catch(() => null);
        return o && o.status !== "RUNNING" ? o : null;
      }, 180_000, 250);
      going = false;
      await load;
      assert.equal(final.status, "COMPLETED", final.error ?? "");
      if (op.kind === "canary") assert.equal(final.progress?.canary?.decision?.decision, "promoted", JSON.stringify(final.progress?.canary?.decision));
      current.set(model, target);
      const m = await p.admin<{ replicas: { version: string; state: string }[] }>("GET", `/models/${model}`);
      assert.deepEqual(m.replicas.map((r) => `${r.version}:${r.state}`), Array(op.replicas).fill(`${target}:ready`));
      await waitFor(`exactly ${op.replicas} engines`, async () => p.enginePids(model).length === op.replicas, 20_000);
      assert.deepEqual(failures, [], `${failures.length} of ${sent} requests failed`);
      await op.afterwards?.(p, model);
    }

    for (const c of crashes) {
      it(`survives ${c.name}`, () => through(c.run, { gatewayDown: c.gatewayDown }));
    }
  });
}
