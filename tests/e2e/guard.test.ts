// Guardrails end to end: policies added with ctl, checked by a real gateway in front of sim engines
// (their echo mode answers with what reached them). Personal data reaches the engine as
// placeholders and comes back restored, plain and streamed; a secret is blocked in both APIs'
// shapes; deny and allow; a pattern re2 refuses; the stricter merge; and no matched text anywhere.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import pg from "pg";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

const SECRET = `ghp_${"Zq7Rk2Lm9Xv4".repeat(3)}`;
const PERSONAL = ["ayse@example.com", "Ayşe Yılmaz"];
const ASK = "echo: write to Ayşe Yılmaz at ayse@example.com";

describe("guardrails in the request path", () => {
  let p: Platform;
  let restoring: { id: string; key: string };
  let plain: { id: string; key: string };
  let dir: string;
  const model = uniqueModel("guard");

  const policyFile = (name: string, text: string) => {
    const f = path.join(dir, `${name}.yaml`);
    fs.writeFileSync(f, text);
    return f;
  };
  const addPolicy = (name: string, text: string) => p.ctl(["guard", "policy", "add", "-f", policyFile(name, text), "--json"]);
  const chat = (k: string) => new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: k, maxRetries: 0 });

  before(async () => {
    p = await startPlatform();
    dir = fs.mkdtempSync(path.join(p.dataDir, "policies-"));
    assert.equal((await p.ctl(["projects", "create", "guarded"])).code, 0);
    const key = async () => JSON.parse((await p.ctl(["keys", "create", "--project", "guarded", "--json"])).stdout) as { id: string; key: string };
    [restoring, plain] = [await key(), await key()];
    const served = await p.ctl(["model", "serve", model, "--engine", "sim", "--replicas", "1", "--wait", "--json"]);
    assert.equal(served.code, 0, served.stderr);
    const pii = "  - {name: personal, detector: pii, kinds: [email, person], action: redact}";
    let r = await addPolicy("restore", `name: restore\nscope: key:${restoring.id}\nrestore: true\ninput:\n${pii}\n  - {name: secrets, detector: secrets, action: block}\n  - {name: codenames, detector: deny, patterns: ['project-[a-z]+'], action: block}\n  - {name: public, detector: allow, patterns: ['project-apollo']}`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { version: number }).version, 1);
    r = await addPolicy("plain", `name: plain\nscope: key:${plain.id}\ninput:\n${pii}`);
    assert.equal(r.code, 0, r.stderr);
    // Gateways reload over the change feed; wait until the plain key's requests are redacted.
    for (let i = 0; i < 50; i++) {
      const a = await chat(plain.key).chat.completions.create({ model, messages: [{ role: "user", content: ASK }] });
      if (a.choices[0]!.message.content!.includes("[EMAIL_1]")) break;
      await new Promise((res) => setTimeout(res, 100));
    }
  });

  after(async () => {
    await p?.stop();
  });

  it("the engine reads placeholders, the same value the same one (no restore: the client sees them too)", async () => {
    const a = await chat(plain.key).chat.completions.create({ model, messages: [{ role: "system", content: "cc ayse@example.com" }, { role: "user", content: ASK }] });
    assert.equal(a.choices[0]!.message.content, "echo: write to [PERSON_1] at [EMAIL_1]");
  });

  it("restore: the client reads the values it sent, not streamed and streamed (placeholders split across events)", async () => {
    const a = await chat(restoring.key).chat.completions.create({ model, messages: [{ role: "user", content: ASK }] });
    assert.equal(a.choices[0]!.message.content, ASK);
    let text = "";
    let events = 0;
    for await (const c of await chat(restoring.key).chat.completions.create({ model, messages: [{ role: "user", content: ASK }], stream: true })) {
      text += c.choices[0]?.delta.content ?? "";
      events++;
    }
    assert.equal(text, ASK);
    assert.ok(events > 4, "the echo came in pieces of 8 characters, so placeholders were split");
  });

  it("restore on /v1/messages too (Anthropic's shape)", async () => {
    const r = await fetch(`${p.clientUrl}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": restoring.key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model, max_tokens: 200, messages: [{ role: "user", content: ASK }] }),
    });
    assert.equal(r.status, 200);
    const m = (await r.json()) as { content: { type: string; text: string }[] };
    assert.equal(m.content[0]!.text, ASK);
  });

  it("a secret is blocked with content_policy_violation naming the rule, never the secret, in both APIs' shapes", async () => {
    await assert.rejects(chat(restoring.key).chat.completions.create({ model, messages: [{ role: "user", content: `use ${SECRET} please` }] }), (e: unknown) => {
      assert.ok(e instanceof OpenAI.BadRequestError, String(e));
      assert.equal(e.code, "content_policy_violation");
      assert.match(e.message, /'secrets' of policy 'restore'/);
      assert.ok(!e.message.includes(SECRET));
      return true;
    });
    const r = await fetch(`${p.clientUrl}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": restoring.key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: `use ${SECRET} please` }] }),
    });
    assert.equal(r.status, 400);
    const body = (await r.json()) as { type: string; error: { type: string; message: string } };
    assert.equal(body.type, "error");
    assert.equal(body.error.type, "invalid_request_error");
    assert.match(body.error.message, /'secrets'/);
    assert.ok(!JSON.stringify(body).includes(SECRET));
    // /v1/completions and /v1/embeddings are checked as well.
    await assert.rejects(chat(restoring.key).completions.create({ model, prompt: `key ${SECRET}`, max_tokens: 2 }), OpenAI.BadRequestError);
    await assert.rejects(chat(restoring.key).embeddings.create({ model, input: [`key ${SECRET}`] }), OpenAI.BadRequestError);
  });

  it("a deny pattern blocks, and an allow pattern overrides it", async () => {
    await assert.rejects(chat(restoring.key).chat.completions.create({ model, messages: [{ role: "user", content: "status of project-hermes" }] }), (e: unknown) => {
      assert.ok(e instanceof OpenAI.BadRequestError);
      assert.match(e.message, /'codenames'/);
      return !e.message.includes("hermes");
    });
    const ok = await chat(restoring.key).chat.completions.create({ model, messages: [{ role: "user", content: "echo: status of project-apollo" }] });
    assert.equal(ok.choices[0]!.message.content, "echo: status of project-apollo");
  });

  it("a pattern re2 refuses (a backreference could backtrack) is refused at add, naming where", async () => {
    const r = await addPolicy("bad", "name: bad\ninput:\n  - {name: x, detector: deny, patterns: ['^(a+)+\\1$'], action: block}");
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /input\.0\.patterns\.0/);
    assert.match(r.stderr, /re2 refuses/);
    const listed = JSON.parse((await p.ctl(["guard", "policy", "list", "--json"])).stdout) as { name: string }[];
    assert.deepEqual(listed.map((x) => x.name).sort(), ["plain", "restore"]);
  });

  it("policies that both apply merge the stricter way, and explain says where each rule came from", async () => {
    const r = await addPolicy("team-wide", "name: team-wide\nscope: default\nfail: closed\ninput:\n  - {name: secrets, detector: secrets, action: flag}\n  - {name: injection, detector: injection, action: flag}");
    assert.equal(r.code, 0, r.stderr);
    const ex = await p.ctl(["guard", "explain", "--key", restoring.id, "--model", model, "--json"]);
    assert.equal(ex.code, 0, ex.stderr);
    const m = (JSON.parse(ex.stdout) as { merged: { fail: string; restore: boolean; input: { name: string; action: string; from: string }[] } }).merged;
    assert.equal(m.fail, "closed");
    assert.equal(m.restore, true);
    assert.deepEqual(
      m.input.find((x) => x.name === "secrets"),
      { ...m.input.find((x) => x.name === "secrets"), action: "block", from: "restore" },
      "block (restore) over flag (team-wide)",
    );
    assert.equal(m.input.find((x) => x.name === "injection")?.from, "team-wide");
    assert.equal((await p.ctl(["guard", "policy", "remove", "team-wide"])).code, 0);
  });

  it("blocks are recorded without their text; nothing matched or restored is in the store, logs or metrics", async () => {
    const ev = await p.ctl(["guard", "events", "--since", "1h", "--json"]);
    assert.equal(ev.code, 0, ev.stderr);
    const events = JSON.parse(ev.stdout) as { rule: string; action: string; direction: string; keyId: string; model: string }[];
    assert.ok(events.some((e) => e.rule === "secrets" && e.action === "block" && e.direction === "input" && e.keyId === restoring.id && e.model === model));
    assert.ok(events.some((e) => e.rule === "codenames"));
    const metrics = await (await fetch(`http://127.0.0.1:${p.env.LLMGW_METRICS_PORT}/metrics`)).text();
    assert.match(metrics, /llmgw_guard_decisions_total\{policy="restore",rule="secrets",action="block",direction="input"\} [1-9]/);
    const db = new pg.Client({ connectionString: p.env.DATABASE_URL });
    await db.connect();
    let store = "";
    try {
      for (const t of ["guard_events", "usage_events", "audit_events", "guard_policies"]) store += JSON.stringify((await db.query(`SELECT t::text AS row FROM ${t} t`)).rows);
    } finally {
      await db.end();
    }
    const logs = fs.readdirSync(path.join(p.dataDir, "logs")).map((f) => fs.readFileSync(path.join(p.dataDir, "logs", f), "utf8")).join("\n");
    for (const [where, text] of [["the store", store], ["the logs", logs], ["the metrics", metrics]] as const) {
      for (const s of [SECRET, ...PERSONAL, "hermes"]) assert.ok(!text.includes(s), `${where} holds '${s}'`);
    }
  });
});
