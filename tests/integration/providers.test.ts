// Outside OpenAI-compatible providers through the real gateway: a catalog model served by keys in
// a file, against stand-in providers (tests/helpers/outside-provider.ts) that refuse a revoked key
// with 401 and hold a limited one with 429 + Retry-After, in OpenAI's shapes. The key's text must
// never reach the gateway's log.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";
import { startOutsideProvider, type OutsideProvider } from "../helpers/outside-provider.ts";

const secret = (what: string) => `sk-outside-${what}-${randomBytes(12).toString("hex")}`;
const GOOD = secret("good");
const REVOKED = secret("revoked");
const LIMITED = secret("limited");
const HEAVY = secret("heavy");
const LIGHT = secret("light");
const SPARE = secret("spare");
const ALL_KEYS = [GOOD, REVOKED, LIMITED, HEAVY, LIGHT, SPARE];
const UPSTREAM_MODEL = "gpt-outside-mini";

describe("outside providers", () => {
  let p: Platform;
  let key: string;
  let upstream: OutsideProvider;
  const revokedModel = uniqueModel("out-revoked");
  const limitedModel = uniqueModel("out-limited");
  const weightedModel = uniqueModel("out-weighted");
  const deadModel = uniqueModel("out-dead");
  let keysDir: string;

  /** A model served by one provider whose keys are in a file of this test's own. */
  async function addModel(name: string, keysText: string): Promise<string> {
    const keysFile = path.join(keysDir, `${name}.keys`);
    fs.writeFileSync(keysFile, keysText, { mode: 0o600 });
    await p.admin("POST", "/models", { name, providers: [{ name: "acme", base_url: upstream.baseUrl, model: UPSTREAM_MODEL, keys_file: keysFile }] });
    return keysFile;
  }

  // Each prompt begins differently, so prefix affinity (chat profile) does not pin them to one key.
  let asked = 0;
  function chat(model: string, extra: Record<string, unknown> = {}): Promise<Response> {
    return fetch(`${p.clientUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({ model, messages: [{ role: "user", content: `${asked++} hello outside` }], max_tokens: 4, ...extra }),
    });
  }

  /** The gateway reads the catalog every few seconds: wait (bounded) until it routes the model. */
  async function routed(model: string): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const r = await fetch(`${p.clientUrl}/v1/models/${model}`, { headers: { authorization: `Bearer ${key}` } });
      await r.body?.cancel();
      const served = await chat(model, { max_tokens: 1 });
      const body = (await served.json()) as { error?: { code?: string } };
      if (served.status === 200 || (body.error?.code !== "model_not_ready" && body.error?.code !== "model_not_found")) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail(`the gateway never routed ${model}`);
  }

  async function metrics(): Promise<string> {
    return (await fetch(`http://127.0.0.1:${p.env.LLMGW_METRICS_PORT}/metrics`)).text();
  }

  /** The sum of a metric's series with these labels; null when there is none. */
  function metric(text: string, name: string, labels: Record<string, string>): number | null {
    let sum: number | null = null;
    for (const line of text.split("\n")) {
      if (!line.startsWith(`${name}{`)) continue;
      if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) sum = (sum ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1));
    }
    return sum;
  }

  before(async () => {
    upstream = await startOutsideProvider({ model: UPSTREAM_MODEL, revoked: [REVOKED], limited: [LIMITED], retryAfterS: 600 });
    p = await startPlatform({ processes: ["gateway"] });
    keysDir = fs.mkdtempSync(path.join(p.dataDir, "keys-"));
    assert.equal((await p.ctl(["projects", "create", "outside"])).code, 0);
    const created = await p.ctl(["keys", "create", "--project", "outside", "--json"]);
    assert.equal(created.code, 0, created.stderr);
    key = (JSON.parse(created.stdout) as { key: string }).key;
  });

  after(async () => {
    await p?.stop();
    await upstream?.close();
  });

  it("a 401 from one outside key moves traffic to the other", async () => {
    await addModel(revokedModel, `# two keys, one of them revoked upstream\n${GOOD}\n${REVOKED}\n`);
    await routed(revokedModel);
    const before = { good: upstream.hits.get(GOOD) ?? 0 };
    for (let i = 0; i < 30; i++) {
      const r = await chat(revokedModel);
      const body = (await r.json()) as { choices?: unknown[]; error?: unknown };
      assert.equal(r.status, 200, `request ${i}: ${JSON.stringify(body)}`);
      assert.equal(body.choices?.length, 1);
      assert.match(r.headers.get("x-llmgw-replica") ?? "", new RegExp(`^outside:${revokedModel}/acme/[0-9a-f]{8}$`));
    }
    // The revoked key was tried at most once in all (possibly by the warm-up), and never again.
    assert.equal(upstream.hits.get(REVOKED), 1, "the revoked key is asked once, then passed over");
    assert.ok((upstream.hits.get(GOOD) ?? 0) - before.good >= 30);
    assert.ok(upstream.models.every((m) => m === UPSTREAM_MODEL), "the body's model is the provider's id");
    const text = await metrics();
    assert.equal(metric(text, "llmgw_outside_key_refusals_total", { model: revokedModel, reason: "refused" }), 1);
    assert.equal(metric(text, "llmgw_replica_breaker_state", { model: revokedModel }), 2, "one key's breaker open (2), the other's closed (0)");
  });

  it("a 429 opens the breaker for that key: the other key answers while it is held", async () => {
    await addModel(limitedModel, `${GOOD}\n${LIMITED}\n`);
    await routed(limitedModel);
    for (let i = 0; i < 30; i++) {
      const r = await chat(limitedModel);
      assert.equal(r.status, 200, await r.text());
    }
    assert.equal(upstream.hits.get(LIMITED), 1, "the limited key is asked once, then held for its Retry-After");
    const text = await metrics();
    assert.equal(metric(text, "llmgw_outside_key_refusals_total", { model: limitedModel, reason: "limited" }), 1);
    assert.equal(metric(text, "llmgw_outside_key_refusals_total", { model: limitedModel, reason: "refused" }), 0);
    let open = 0;
    for (const line of text.split("\n")) if (line.startsWith("llmgw_replica_breaker_state{") && line.includes(`model="${limitedModel}"`) && line.endsWith(" 2")) open++;
    assert.equal(open, 1, "exactly one key's breaker is open");
  });

  it("keys spread by weight within a tolerance, and a changed keys file is read again", async () => {
    const keysFile = await addModel(weightedModel, `${HEAVY} 3\n${LIGHT} 1\n`);
    await routed(weightedModel);
    const start = { heavy: upstream.hits.get(HEAVY) ?? 0, light: upstream.hits.get(LIGHT) ?? 0 };
    const n = 400;
    for (let i = 0; i < n; i++) {
      const r = await chat(weightedModel, { max_tokens: 1 });
      assert.equal(r.status, 200);
      await r.body?.cancel();
    }
    const heavy = (upstream.hits.get(HEAVY) ?? 0) - start.heavy;
    const light = (upstream.hits.get(LIGHT) ?? 0) - start.light;
    assert.equal(heavy + light, n);
    // 3:1 expects 300 of 400; a binomial's standard deviation here is ~8.7: ±40 is over 4.5 of them.
    assert.ok(heavy > 260 && heavy < 340, `heavy key took ${heavy} of ${n}`);

    // The light key replaced by another in the file: the gateway reads it again (bounded wait).
    fs.writeFileSync(keysFile, `${HEAVY} 3\n${SPARE} 1\n`);
    let spare = 0;
    for (let i = 0; i < 400 && spare === 0; i++) {
      const r = await chat(weightedModel, { max_tokens: 1 });
      assert.equal(r.status, 200);
      await r.body?.cancel();
      spare = upstream.hits.get(SPARE) ?? 0;
      if (spare === 0) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(spare > 0, "the new key was used");
    const lightAfter = upstream.hits.get(LIGHT) ?? 0;
    for (let i = 0; i < 20; i++) await (await chat(weightedModel, { max_tokens: 1 })).body?.cancel();
    assert.equal(upstream.hits.get(LIGHT) ?? 0, lightAfter, "the removed key is no longer used");
  });

  it("streams through an outside provider, with usage", async () => {
    const r = await chat(revokedModel, { stream: true, stream_options: { include_usage: true } });
    assert.equal(r.status, 200);
    assert.match(r.headers.get("content-type") ?? "", /^text\/event-stream/);
    const text = await r.text();
    assert.match(text, /"usage":\{"prompt_tokens":\d+,"total_tokens":\d+,"completion_tokens":4/);
    assert.match(text, /data: \[DONE\]/);
  });

  it("every key refused: a 503 in OpenAI's shape, not the provider's 401", async () => {
    await addModel(deadModel, `${REVOKED}\n`);
    await routed(deadModel);
    const r = await chat(deadModel);
    assert.equal(r.status, 503);
    const body = (await r.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, "outside_key_refused");
    assert.ok(!body.error.message.includes(REVOKED));
  });

  it("ctl model show lists the providers by address, never a key", async () => {
    const shown = await p.ctl(["model", "show", revokedModel]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`outside provider acme: http://127\\.0\\.0\\.1:\\d+\\S* \\(model ${UPSTREAM_MODEL}, weight 1\\)`));
    const json = (await p.ctl(["model", "show", revokedModel, "--json"])).stdout;
    for (const k of ALL_KEYS) assert.ok(!json.includes(k), "a key's text is in the model view");
  });

  it("no key's text ever reaches the gateway's log; keys are named by their hash prefix", () => {
    const log = fs.readFileSync(p.children.get("gateway")!.logFile, "utf8");
    for (const k of ALL_KEYS) assert.ok(!log.includes(k), "a key's text is in the gateway log");
    for (const k of ALL_KEYS) assert.ok(!log.includes(k.slice(-16)), "part of a key's text is in the gateway log");
    assert.match(log, /external_key_refused/);
    assert.match(log, /external_key_limited/);
    assert.match(log, /sha256:[0-9a-f]{12}/);
  });
});
