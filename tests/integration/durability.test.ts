// Operations finish whatever crashes meanwhile. While a serve (a scale-up), a rolling upgrade and a
// canary, one of each at once on three models, wait for their new engines, the Temporal worker, an
// agent, the gateway and the Temporal server itself are killed in turn (SIGKILL) and started again;
// each time every operation completes, exactly the wanted engines of the wanted version run, and a
// load through the gateway sees no failure except while the gateway itself is down. The Temporal
// server is one of this file's own, so its outage touches no other test. One platform serves all
// three models: a crash meets the three operations together, so each process restart and platform
// start is paid once rather than once per kind.
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

/**
 * Engines that take 10 s to load, so each operation surely still waits for them when the crash
 * comes: the three start together, and the crash waits until all three are waiting at once.
 */
const slow = { engine: "sim", args: ["--load-delay-ms", "10000"] };

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

const crashes: { name: string; gatewayDown?: boolean; run(p: Platform): Promise<void> }[] = [
  { name: "its Temporal worker being killed", run: (p) => restart(p, "worker-temporal") },
  { name: "the agent being killed (its engines keep serving and are adopted)", run: (p) => restart(p, "agent") },
  { name: "the gateway being killed", gatewayDown: true, run: (p) => restart(p, "gateway") },
  { name: "the Temporal server being killed and restarted on its file", run: async () => temporal.kill(2) },
];

let temporal: ThrowawayTemporal;

describe("durability of a serve, an upgrade and a canary", () => {
  let p: Platform;
  let key: string;
  const models = new Map(operations.map((op) => [op.kind, uniqueModel(`durable-${op.kind}`)]));
  let version = 1;

  before(async () => {
    temporal = await startThrowawayTemporal();
    p = await startPlatform({ env: { TEMPORAL_ADDRESS: temporal.address } });
    key = (await p.newKey({ project: "dur" })).key;
    await Promise.all(
      [...models.values()].map(async (model) => {
        assert.equal((await p.ctl(["model", "serve", model, "--engine", "sim", "--version", "v1", "--replicas", String(REPLICAS), "--wait"])).code, 0);
        current.set(model, "v1");
      }),
    );
  });
  after(async () => {
    await p?.stop();
    temporal?.destroy();
  });

  /** Runs each operation towards its model's next version; `crash` runs while all three wait for their new engines. */
  async function through(crash: (p: Platform) => Promise<void>, opts: { gatewayDown?: boolean } = {}) {
    const target = `v${++version}`;
    const client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, maxRetries: 0 });
    let going = true;
    let gatewayDown = false;
    const failures = new Map(operations.map((op) => [op.kind, [] as string[]]));
    let sent = 0;
    // One request after another, to each model in turn.
    const load = (async () => {
      while (going) {
        const op = operations[sent++ % operations.length]!;
        const down = gatewayDown;
        try {
          await client.chat.completions.create({ model: models.get(op.kind)!, messages: [{ role: "user", content: `d${sent}` }], max_tokens: 2 });
        } catch (err) {
          if (!down && !gatewayDown) failures.get(op.kind)!.push((err as Error).message);
          else await new Promise((r) => setTimeout(r, 100));
        }
      }
    })();
    const targetOf = (op: Operation) => (op.kind === "serve" ? current.get(models.get(op.kind)!)! : target);
    const ids = await Promise.all(operations.map((op) => op.start(p, models.get(op.kind)!, targetOf(op))));
    await waitFor("the serve, the upgrade and the canary to wait for new engines at once", async () => {
      const os = await Promise.all(ids.map((id) => p.admin<{ status: string; progress: { phase: string } | null }>("GET", `/operations/${id}`)));
      return os.every((o) => o.status === "RUNNING" && o.progress?.phase === "waiting-ready");
    }, 60_000, 100);
    if (opts.gatewayDown) gatewayDown = true;
    await crash(p);
    if (opts.gatewayDown) {
      await waitFor("the gateway to answer again", async () => (await fetch(`${p.adminUrl}/health`)).ok, 60_000);
      gatewayDown = false;
    }
    const finals = await Promise.all(
      operations.map((op, i) =>
        waitFor(`the ${op.kind} to finish`, async () => {
          const o = await p.admin<{ status: string; error: string | null; progress: { canary?: { decision: { decision: string; reason: string } | null } } | null }>("GET", `/operations/${ids[i]}`).catch(() => null);
          return o && o.status !== "RUNNING" ? o : null;
        }, 180_000, 250),
      ),
    );
    going = false;
    await load;
    // Each operation judged on its own, and the models put back before any verdict, so one kind's
    // failure is reported without leaving the next crash's operations a model in the wrong state.
    const problems: string[] = [];
    for (const [i, op] of operations.entries()) {
      const model = models.get(op.kind)!;
      const final = finals[i]!;
      try {
        assert.equal(final.status, "COMPLETED", final.error ?? "");
        if (op.kind === "canary") assert.equal(final.progress?.canary?.decision?.decision, "promoted", JSON.stringify(final.progress?.canary?.decision));
        current.set(model, targetOf(op));
        const m = await p.admin<{ replicas: { version: string; state: string }[] }>("GET", `/models/${model}`);
        assert.deepEqual(m.replicas.map((r) => `${r.version}:${r.state}`), Array(op.replicas).fill(`${targetOf(op)}:ready`));
        await waitFor(`exactly ${op.replicas} engines`, async () => p.enginePids(model).length === op.replicas, 20_000);
        const failed = failures.get(op.kind)!;
        assert.deepEqual(failed, [], `${failed.length} of its model's ${Math.ceil(sent / operations.length)} requests failed`);
      } catch (err) {
        problems.push(`the ${op.kind}: ${(err as Error).message}`);
      }
    }
    await Promise.all(operations.map((op) => op.afterwards?.(p, models.get(op.kind)!)));
    assert.deepEqual(problems, []);
  }

  for (const c of crashes) {
    it(`each survives ${c.name}`, () => through(c.run, { gatewayDown: c.gatewayDown }));
  }
});
