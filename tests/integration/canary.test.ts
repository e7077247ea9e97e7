// Canary under load: the new version gets its share of requests; a healthy one is promoted (a
// rolling upgrade of the rest), a slow one is rolled back by itself, with the figures kept.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";
import type { CanaryDecision } from "../../workflows/model-types.ts";

interface Op {
  status: string;
  progress: { canary?: { decision: CanaryDecision | null } } | null;
}

describe("canary", () => {
  let p: Platform;
  let key: string;
  const model = uniqueModel("canary");
  const versions = async () => (await p.admin<{ replicas: { version: string; state: string }[] }>("GET", `/models/${model}`)).replicas.map((r) => r.version).sort();

  before(async () => {
    p = await startPlatform();
    await p.ctl(["projects", "create", "canary"]);
    key = (JSON.parse((await p.ctl(["keys", "create", "--project", "canary", "--json"])).stdout) as { key: string }).key;
    assert.equal((await p.ctl(["model", "serve", model, "--engine", "sim", "--version", "v1", "--replicas", "2", "--wait"])).code, 0);
  });
  after(async () => {
    await p?.stop();
  });

  /** Requests one after another while `run` lasts; counts answers per replica. */
  async function underLoad<T>(run: () => Promise<T>): Promise<{ result: T; failures: number; sent: number }> {
    const client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, maxRetries: 0 });
    let going = true;
    let sent = 0;
    let failures = 0;
    const loop = (async () => {
      while (going) {
        sent++;
        await client.chat.completions.create({ model, messages: [{ role: "user", content: `c${sent}` }], max_tokens: 2 }).catch(() => failures++);
      }
    })();
    const result = await run();
    going = false;
    await loop;
    return { result, failures, sent };
  }

  it("promotes a healthy version after its windows, then upgrades the rest", async () => {
    const { result, failures, sent } = await underLoad(() =>
      p.ctl(["model", "canary", model, "--to", "v2", "--engine", "sim", "--weight", "30", "--for", "6s", "--window", "2s", "--min-requests", "3", "--wait", "--json"]),
    );
    assert.equal(result.code, 0, result.stderr);
    const op = JSON.parse(result.stdout) as Op;
    const decision = op.progress?.canary?.decision;
    assert.equal(decision?.decision, "promoted", JSON.stringify(decision));
    assert.ok(decision!.windows.length >= 2);
    const share = decision!.windows.reduce((s, w) => s + w.canary.requests, 0) / decision!.windows.reduce((s, w) => s + w.canary.requests + w.stable.requests, 0);
    assert.ok(share > 0.15 && share < 0.45, `the canary got about its 30% share: ${share.toFixed(2)}`);
    assert.equal(failures, 0, `${failures} of ${sent} requests failed`);
    assert.deepEqual(await versions(), ["v2", "v2"]);
    assert.equal(p.enginePids(model).length, 2);
  });

  it("rolls back a version whose latency is too high, by itself", async () => {
    const { result } = await underLoad(() =>
      p.ctl([
        "model", "canary", model, "--to", "v3", "--engine", "sim", "--arg=--ttft-ms", "--arg=150",
        "--weight", "40", "--for", "20s", "--window", "2s", "--min-requests", "3", "--max-latency-ratio", "3", "--wait", "--json",
      ]),
    );
    assert.equal(result.code, 0, result.stderr);
    const decision = (JSON.parse(result.stdout) as Op).progress?.canary?.decision;
    assert.equal(decision?.decision, "rolled-back", JSON.stringify(decision));
    assert.match(decision!.reason, /median latency .* is over 3× the stable/);
    assert.deepEqual(await versions(), ["v2", "v2"]);
    assert.equal(p.enginePids(model).length, 2);
    const state = (await p.admin<{ state: { desired: { version: string } } }>("GET", `/models/${model}`)).state;
    assert.equal(state.desired.version, "v2");
  });
});
