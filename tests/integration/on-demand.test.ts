// On-demand models (min_replicas 0): no engine until the first request, which the gateway holds while
// the model's workflow wakes it; one replica however many requests arrive at once; asleep again
// (engines stopped) once idle longer than its live idle_after; and a 503 with Retry-After when the
// wake takes longer than the model's wake_wait (and other gateways' wakes meanwhile cause no second one).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { waitFor } from "../../common/children.ts";
import { temporalClient } from "../../common/temporal.ts";
import { wakeSignal } from "../../workflows/messages.ts";
import { modelWorkflowId } from "../../workflows/model-types.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

type Shown = {
  replicas: { state: string }[];
  state: { onDemand?: { phase: string; wakes: number }; operations: { kind: string; state: string }[] } | null;
};

describe("an on-demand model wakes on its first request and sleeps when idle", () => {
  let p: Platform;
  let key: string;
  const model = uniqueModel("od");
  const slow = uniqueModel("od-slow");

  const addModel = async (name: string, extra: string) => {
    const f = path.join(p.dataDir, `${name}.yaml`);
    fs.writeFileSync(f, `name: ${name}\nmin_replicas: 0\n${extra}versions:\n  - version: v1\n    engine: sim\n`);
    const added = await p.ctl(["model", "add", "-f", f, "--json"]);
    assert.equal(added.code, 0, added.stderr);
  };
  const show = async (name: string): Promise<Shown> => {
    const r = await p.ctl(["model", "show", name, "--json"]);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as Shown;
  };
  const chat = (client: OpenAI, content: string) => client.chat.completions.create({ model, messages: [{ role: "user", content }], max_tokens: 4 });

  before(async () => {
    p = await startPlatform();
    assert.equal((await p.ctl(["projects", "create", "od"])).code, 0);
    const created = await p.ctl(["keys", "create", "--project", "od", "--json"]);
    assert.equal(created.code, 0, created.stderr);
    key = (JSON.parse(created.stdout) as { key: string }).key;
    // Idle for an hour at first: the idle setting is changed live below.
    await addModel(model, "idle_after: 1h\n");
    await addModel(slow, "wake_wait: 200ms\n");
    // The gateway re-reads the catalog every few seconds.
    for (const name of [model, slow]) {
      await waitFor(`the gateway to know ${name}`, async () => (await fetch(`${p.clientUrl}/v1/models/${name}`, { headers: { authorization: `Bearer ${key}` } })).ok, 30_000);
    }
  });

  after(async () => {
    await p?.stop();
  });

  it("runs no engine before its first request", async () => {
    assert.equal(p.enginePids(model).length, 0);
    assert.equal((await show(model)).replicas.length, 0);
  });

  it("answers its first requests (two at once) through the openai client, woken with exactly one replica", async () => {
    const client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, maxRetries: 0 });
    const answers = await Promise.all([chat(client, "first"), chat(client, "second")]);
    for (const a of answers) assert.equal(a.usage?.completion_tokens, 4);
    assert.equal(p.enginePids(model).length, 1);
    const shown = await show(model);
    assert.deepEqual(shown.replicas.map((r) => r.state), ["ready"]);
    assert.equal(shown.state?.onDemand?.phase, "serving");
    assert.equal(shown.state?.onDemand?.wakes, 1);
    assert.equal(shown.state?.operations.filter((o) => o.kind === "wake").length, 1, "one wake for both requests");
  });

  it("takes a shorter idle_after live and sleeps once idle: no engine, shown as sleeping", async () => {
    const set = await p.ctl(["model", "set", model, "--idle-after", "3s", "--json"]);
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(JSON.parse(set.stdout), { name: model, minReplicas: 0, onDemand: true, idleAfterMs: 3000, idleAfter: "3s", wakeWaitMs: null, wakeWait: null });
    await waitFor("the model to sleep", async () => (await show(model)).state?.onDemand?.phase === "sleeping", 60_000, 500);
    assert.equal(p.enginePids(model).length, 0);
    assert.equal((await show(model)).replicas.length, 0);
    const text = await p.ctl(["model", "show", model]);
    assert.match(text.stdout, /on demand: sleeping since .*, 1 wake\(s\); idle after 3s/);
  });

  it("wakes again on the next request", async () => {
    const client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, maxRetries: 0 });
    const a = await chat(client, "again");
    assert.equal(a.usage?.completion_tokens, 4);
    assert.equal(p.enginePids(model).length, 1);
    assert.equal((await show(model)).state?.onDemand?.wakes, 2);
  });

  it("counts wakes and wake waits in the gateway's metrics", async () => {
    const text = await (await fetch(`http://127.0.0.1:${p.env.LLMGW_METRICS_PORT}/metrics`)).text();
    // Asked once per wake (a wake slower than 10 s is asked again).
    const wakes = new RegExp(`llmgw_model_wakes_total\\{model="${model}"\\} (\\d+)`).exec(text);
    assert.ok(wakes && Number(wakes[1]) >= 2, `wakes asked: ${wakes?.[1]}`);
    // Three requests waited: the two first ones and the one after the sleep.
    assert.match(text, new RegExp(`llmgw_wake_wait_seconds_count\\{model="${model}",outcome="ready"\\} 3`));
  });

  it("answers 503 with Retry-After, in OpenAI's shape, when the wake takes longer than wake_wait", async () => {
    const r = await fetch(`${p.clientUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: slow, messages: [{ role: "user", content: "hi" }], max_tokens: 2 }),
    });
    assert.equal(r.status, 503);
    assert.equal(r.headers.get("retry-after"), "5");
    const body = (await r.json()) as { error: { type: string; code: string; message: string } };
    assert.equal(body.error.type, "service_unavailable_error");
    assert.equal(body.error.code, "model_waking");
    assert.match(body.error.message, /waking/);
    // Two other gateways ask too, while the wake goes on or after it: the workflow wakes it once.
    const temporal = await temporalClient();
    try {
      // The gateway's own wake starts the model's workflow without waiting for it: signal once it is there.
      const handle = temporal.client.workflow.getHandle(modelWorkflowId(slow));
      await waitFor("the slow model's workflow", async () => (await handle.describe().then(() => true, () => false)), 30_000, 100);
      for (let i = 0; i < 2; i++) await handle.signal(wakeSignal, { reason: `gateway ${i + 2}` });
    } finally {
      await temporal.close();
    }
    await waitFor("the slow model to wake", async () => (await show(slow)).state?.onDemand?.phase === "serving", 60_000, 500);
    const shown = await show(slow);
    assert.equal(shown.state?.onDemand?.wakes, 1);
    assert.equal(shown.state?.operations.filter((o) => o.kind === "wake").length, 1);
    assert.equal(p.enginePids(slow).length, 1);
    // A later request finds the model up.
    const client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, maxRetries: 0 });
    const a = await client.chat.completions.create({ model: slow, messages: [{ role: "user", content: "hi" }], max_tokens: 2 });
    assert.equal(a.usage?.completion_tokens, 2);
  });

  it("answers from a fallback with room while an asleep model wakes, then from the model itself", async () => {
    const target = uniqueModel("od-fb-target");
    const asleep = uniqueModel("od-fb");
    const up = await p.ctl(["model", "serve", target, "--engine", "sim", "--replicas", "1", "--wait"]);
    assert.equal(up.code, 0, up.stderr);
    await addModel(asleep, `idle_after: 1h\nfallbacks: [${target}]\n`);
    const ask = () =>
      fetch(`${p.clientUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: asleep, messages: [{ role: "user", content: "hi" }], max_tokens: 2 }),
      });
    await waitFor(`the gateway to know ${asleep}`, async () => (await fetch(`${p.clientUrl}/v1/models/${asleep}`, { headers: { authorization: `Bearer ${key}` } })).ok, 30_000);
    assert.equal(p.enginePids(asleep).length, 0);
    const first = await ask();
    assert.equal(first.status, 200);
    assert.equal(first.headers.get("x-llmgw-fallback"), target);
    assert.equal(((await first.json()) as { model: string }).model, target);
    // The wake was asked for all the same: the model comes up, and then answers itself.
    await waitFor(`${asleep} to wake`, async () => (await show(asleep)).state?.onDemand?.phase === "serving", 60_000, 500);
    await waitFor(`${asleep} to answer itself`, async () => {
      const r = await ask();
      return r.status === 200 && r.headers.get("x-llmgw-fallback") === null;
    }, 30_000, 250);
    assert.equal(p.enginePids(asleep).length, 1);
  });

  it("sleeps a served model once its catalog entry is added again with min_replicas 0 (no `model set`)", async () => {
    const served = uniqueModel("od-readd");
    const up = await p.ctl(["model", "serve", served, "--engine", "sim", "--replicas", "1", "--wait"]);
    assert.equal(up.code, 0, up.stderr);
    assert.equal(p.enginePids(served).length, 1);
    await addModel(served, "idle_after: 2s\n");
    await waitFor("the re-added model to sleep", async () => (await show(served)).state?.onDemand?.phase === "sleeping", 60_000, 500);
    assert.equal(p.enginePids(served).length, 0);
  });
});
