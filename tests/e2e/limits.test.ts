// Limits through the official openai client, held across TWO gateway processes sharing one Redis:
// a rate gives 429 with Retry-After, a spent monthly budget 429 without it and one notification.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { startChild, stopChild, waitFor, type Child } from "../../common/children.ts";
import { freePort, startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";
import { limitsLoaded as loaded } from "../helpers/platform-setup.ts";

describe("limits across two gateways", () => {
  let p: Platform;
  let second: Child;
  let secondUrl: string;
  const model = uniqueModel("e2e-limits");
  const keyFor = async (project: string) => (await p.newKey({ project })).key;
  const ask = (base: string, apiKey: string) =>
    new OpenAI({ baseURL: `${base}/v1`, apiKey, maxRetries: 0 }).chat.completions.create({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 4 });
  /** Asks `base` until it refuses `key` with a 429 (bounded): gateways load limits, prices and spends on their own timers. */
  const refused = (base: string, key: string) =>
    waitFor(`${base} to refuse the key`, async () => {
      try {
        await ask(base, key);
        return null;
      } catch (e) {
        if (e instanceof OpenAI.RateLimitError) return e;
        throw e;
      }
    }, 30_000, 200);
  const limitsLoaded = () => loaded(p, model, [p.clientUrl, secondUrl]);

  before(async () => {
    p = await startPlatform();
    await p.serve(model);
    // Ports the system has free now: a random block once hit a port in use (CI: EADDRINUSE).
    const [client, admin, metrics, control] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    secondUrl = `http://127.0.0.1:${client}`;
    second = startChild("gateway-2", ["gateway"], {
      env: { ...p.env, LLMGW_CLIENT_PORT: String(client), LLMGW_ADMIN_PORT: String(admin), LLMGW_METRICS_PORT: String(metrics), LLMGW_CONTROL_PORT: String(control) },
      logDir: path.join(p.dataDir, "logs"),
    });
    await waitFor("the second gateway", async () => (await fetch(`${secondUrl}/health`)).ok, 60_000);
  });
  after(async () => {
    if (second) await stopChild(second, 10_000);
    await p?.stop();
  });

  it("requests per minute hold across both gateways, with Retry-After", async () => {
    const key = await keyFor("rated");
    const set = await p.ctl(["limits", "set", "project", "rated", "--rpm", "4"]);
    assert.equal(set.code, 0, set.stderr);
    await limitsLoaded();
    await ask(p.clientUrl, key);
    await ask(secondUrl, key);
    await ask(p.clientUrl, key);
    await ask(secondUrl, key);
    for (const base of [p.clientUrl, secondUrl]) {
      await assert.rejects(ask(base, key), (e: unknown) => {
        assert.ok(e instanceof OpenAI.RateLimitError, String(e));
        assert.ok(Number(e.headers?.get("retry-after")) >= 1, `Retry-After: ${e.headers?.get("retry-after")}`);
        return true;
      });
    }
    const listed = JSON.parse((await p.ctl(["limits", "list", "--json"])).stdout) as { scope: string; name: string; rpm: number }[];
    assert.deepEqual(listed.find((l) => l.name === "rated"), { scope: "project", name: "rated", rpm: 4, tpm: null, concurrent: null, monthlyBudget: null, monthlyBudgetGpuHours: null, tools: [] });
  });

  it("a spent monthly budget is a 429 without Retry-After, on either gateway", async () => {
    const key = await keyFor("budgeted");
    assert.equal((await p.ctl(["prices", "set", model, "--prompt", "1000", "--completion", "1000"])).code, 0);
    assert.equal((await p.ctl(["limits", "set", "project", "budgeted", "--budget", "0.000001"])).code, 0);
    // The first request the budget's gateway lets through spends more than the 1 micro-unit budget;
    // then each gateway, once it has heard of the spend, refuses.
    for (const base of [p.clientUrl, secondUrl]) {
      const e = await refused(base, key);
      assert.equal((e.error as { code?: string }).code, "budget_exceeded");
      assert.equal(e.headers?.get("retry-after"), null);
    }
    // Both gateways noticed the budget spent: one notification names the project.
    const { id: projectId } = JSON.parse((await p.ctl(["projects", "create", "budgeted", "--json"])).stdout) as { id: string };
    const spent = await waitFor("the budget_spent notification", async () => {
      const ns = JSON.parse((await p.ctl(["notify", "list", "--json"])).stdout) as { kind: string; subject: string }[];
      return ns.some((n) => n.kind === "budget_spent" && n.subject === `project/${projectId}`) ? ns : null;
    }, 10_000, 200);
    assert.equal(spent.filter((n) => n.kind === "budget_spent" && n.subject === `project/${projectId}`).length, 1, "one notification, however many gateways refused");
  });

  it("limit names are checked: an unknown project names the existing ones", async () => {
    const r = await p.ctl(["limits", "set", "project", "nope", "--rpm", "1"]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /projects: .*budgeted.*rated/);
  });
});
