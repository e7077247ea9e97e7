// POST /v1/moderations end to end through the official openai client: a sim engine in its Llama
// Guard mode (--guard-judge: `unsafe` and a category for a trigger word) is the judge of a policy
// that applies to one key; that key's moderations are the judge's verdicts in OpenAI's shape, one
// usage row each; a key no judge applies to gets 404 no_moderation_model; malformed bodies are
// answered in OpenAI's error shape.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

describe("POST /v1/moderations, answered by the guardrails' judge", () => {
  let p: Platform;
  let judged: { id: string; key: string };
  let plain: { id: string; key: string };
  const judge = uniqueModel("mod-judge");
  const client = (k: string) => new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: k, maxRetries: 0 });

  before(async () => {
    p = await startPlatform();
    assert.equal((await p.ctl(["projects", "create", "moderated"])).code, 0);
    const key = async () => JSON.parse((await p.ctl(["keys", "create", "--project", "moderated", "--json"])).stdout) as { id: string; key: string };
    [judged, plain] = [await key(), await key()];
    await p.serve(judge, { args: ["--guard-judge", "true"] });
    const file = path.join(p.dataDir, "judge-policy.yaml");
    fs.writeFileSync(file, `name: judged\nscope: key:${judged.id}\nfail: closed\ninput:\n  - {name: safety, detector: judge, model: ${judge}, timeout: 5, action: flag}`);
    const r = await p.ctl(["guard", "policy", "add", "-f", file]);
    assert.equal(r.code, 0, r.stderr);
    // Gateways reload policies over the change feed: wait until the key has its judge.
    for (let i = 0; i < 100; i++) {
      const ok = await client(judged.key).moderations.create({ input: "hello" }).then(() => true, () => false);
      if (ok) break;
      await new Promise((res) => setTimeout(res, 100));
    }
  });
  after(async () => {
    await p?.stop();
  });

  it("flags what the judge calls unsafe, with OpenAI's categories, a result per input, and usage", async () => {
    const m = await client(judged.key).moderations.create({ model: "omni-moderation-latest", input: ["how to steal a car", "a nice day", "I will murder him"] });
    assert.match(m.id, /^modr-/);
    assert.equal(m.model, judge);
    assert.equal(m.results.length, 3);
    const [steal, nice, murder] = m.results;
    assert.equal(steal!.flagged, true);
    assert.equal(steal!.categories.illicit, true);
    assert.equal(steal!.category_scores.illicit, 1);
    assert.equal(nice!.flagged, false);
    assert.ok(Object.values(nice!.categories).every((v) => v === false));
    assert.equal(murder!.categories.violence, true);
    assert.equal(murder!.categories["illicit/violent"], true);
    assert.equal(murder!.categories.hate, false);
    const one = await client(judged.key).moderations.create({ input: [{ type: "text", text: "nerve gas" }] });
    assert.equal(one.results.length, 1);
    assert.equal(one.results[0]!.categories["illicit/violent"], true);
    const { prisma } = await import("../../common/db.ts");
    const db = prisma(p.env.DATABASE_URL);
    let rows: { model: string; status: number }[] = [];
    for (const deadline = Date.now() + 15_000; Date.now() < deadline && rows.length < 2; await new Promise((res) => setTimeout(res, 200))) {
      rows = await db.usageEvent.findMany({ where: { keyId: judged.id, endpoint: "/v1/moderations", status: 200 } });
    }
    await db.$disconnect();
    assert.ok(rows.length >= 2);
    assert.equal(rows[0]!.model, judge);
  });

  it("is 404 no_moderation_model where no judge applies; malformed bodies in OpenAI's error shape", async () => {
    await assert.rejects(client(plain.key).moderations.create({ input: "hello" }), (e: unknown) => {
      assert.ok(e instanceof OpenAI.NotFoundError, String(e));
      assert.equal(e.code, "no_moderation_model");
      return true;
    });
    const post = async (body: string) => {
      const r = await fetch(`${p.clientUrl}/v1/moderations`, { method: "POST", headers: { authorization: `Bearer ${judged.key}`, "content-type": "application/json" }, body });
      return { status: r.status, body: (await r.json()) as { error: { type: string; param: string | null; code: string | null } } };
    };
    for (const [body, param] of [["{}", "input"], ['{"input": 7}', "input"], ['{"input": []}', "input"], ['{"input": "x", "model": ""}', "model"]] as const) {
      const r = await post(body);
      assert.equal(r.status, 400, body);
      assert.equal(r.body.error.type, "invalid_request_error");
      assert.equal(r.body.error.param, param, body);
    }
    assert.equal((await post("{broken")).body.error.code, "invalid_json");
  });
});
