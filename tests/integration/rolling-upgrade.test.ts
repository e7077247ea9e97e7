// Rolling upgrade under load: waves of new replicas come up before old ones are drained and
// stopped, no request fails, and abort rolls back to the old version.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { waitFor } from "../../common/children.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

interface ModelView {
  replicas: { version: string; state: string }[];
  state: { desired: { version: string; replicas: number } | null; operations: { id: string; state: string; error?: string }[] } | null;
}

describe("rolling upgrade", () => {
  let p: Platform;
  let key: string;
  const model = uniqueModel("roll");

  before(async () => {
    p = await startPlatform();
    await p.ctl(["projects", "create", "roll"]);
    key = (JSON.parse((await p.ctl(["keys", "create", "--project", "roll", "--json"])).stdout) as { key: string }).key;
    const served = await p.ctl(["model", "serve", model, "--engine", "sim", "--version", "v1", "--replicas", "3", "--wait"]);
    assert.equal(served.code, 0, served.stderr);
  });
  after(async () => {
    await p?.stop();
  });

  /** Sends requests one after another until stopped; returns how many were sent and which failed. */
  function load() {
    const client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, maxRetries: 0 });
    let running = true;
    const failures: string[] = [];
    let sent = 0;
    const versions = new Set<string>();
    const done = (async () => {
      while (running) {
        sent++;
        try {
          const { response } = await client.chat.completions.create({ model, messages: [{ role: "user", content: `n${sent}` }], max_tokens: 4 }).withResponse();
          versions.add(response.headers.get("x-llmgw-replica") ?? "");
        } catch (err) {
          failures.push((err as Error).message);
        }
      }
    })();
    return {
      stop: async () => {
        running = false;
        await done;
        return { sent, failures, replicasSeen: versions.size };
      },
    };
  }

  it("replaces every replica in waves with no failed request", async () => {
    const l = load();
    const r = await p.ctl(["model", "upgrade", model, "--to", "v2", "--engine", "sim", "--wave", "1", "--wait", "--json"]);
    const result = await l.stop();
    assert.equal(r.code, 0, r.stderr);
    const op = JSON.parse(r.stdout) as { status: string; progress: { waves: { done: number; total: number } } };
    assert.equal(op.status, "COMPLETED");
    assert.deepEqual(op.progress.waves, { done: 3, total: 3 });
    assert.deepEqual(result.failures, [], `${result.failures.length} of ${result.sent} requests failed`);
    assert.ok(result.sent > 10, `the load ran throughout (${result.sent} requests)`);
    assert.ok(result.replicasSeen > 3, "old and new replicas both answered during the upgrade");
    const m = await p.admin<ModelView>("GET", `/models/${model}`);
    assert.deepEqual(m.replicas.map((x) => x.version).sort(), ["v2", "v2", "v2"]);
    assert.equal(m.state?.desired?.version, "v2");
    assert.equal(p.enginePids(model).length, 3);
  });

  it("rolls back to the old version when aborted mid-way", async () => {
    // v3's engines load slowly, so the abort lands while the first wave waits for them.
    const started = await p.admin<{ operationId: string }>("POST", `/models/${model}/upgrade`, {
      version: "v3",
      engine: "sim",
      args: ["--load-delay-ms", "3000"],
      wave: 1,
    });
    await waitFor("the first wave to start", async () => {
      const op = await p.admin<{ progress: { phase: string } | null }>("GET", `/operations/${started.operationId}`);
      return op.progress?.phase === "waiting-ready";
    }, 30_000, 100);
    const aborted = await p.ctl(["operation", "abort", started.operationId]);
    assert.equal(aborted.code, 0, aborted.stderr);
    const final = await waitFor("the upgrade to end", async () => {
      const op = await p.admin<{ status: string; error: string | null }>("GET", `/operations/${started.operationId}`);
      return op.status === "RUNNING" ? null : op;
    }, 120_000, 250);
    assert.equal(final.status, "FAILED");
    assert.match(final.error ?? "", /aborted by an operator; rolled back to v2/);
    await waitFor("only v2 replicas left", async () => {
      const m = await p.admin<ModelView>("GET", `/models/${model}`);
      const versions = m.replicas.map((x) => x.version).sort();
      return versions.length === 3 && versions.every((v) => v === "v2") && p.enginePids(model).length === 3;
    }, 30_000);
    const m = await p.admin<ModelView>("GET", `/models/${model}`);
    assert.equal(m.state?.desired?.version, "v2", "the desired state still says v2");
  });
});
