// Keys through the official openai client: revoked and expired keys are refused (401) on every
// gateway at once, a model-restricted key gets 403, a rotated key overlaps with its successor.
// Then prices → cost in the ledger → the usage report (JSON, CSV, ctl) and the audit log.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { waitFor } from "../../common/children.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";
import { limitsLoaded } from "../helpers/platform-setup.ts";

describe("API keys, prices, the usage report and the audit log", () => {
  let p: Platform;
  const model = uniqueModel("e2e-keys");
  const client = (apiKey: string) => new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey, maxRetries: 0 });
  const ask = (apiKey: string, m = model) => client(apiKey).chat.completions.create({ model: m, messages: [{ role: "user", content: "hi" }], max_tokens: 4 });
  const newKey = async (...extra: string[]) => {
    const r = await p.ctl(["keys", "create", "--project", "keys", "--json", ...extra]);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as { id: string; key: string };
  };

  before(async () => {
    p = await startPlatform();
    assert.equal((await p.ctl(["projects", "create", "keys"])).code, 0);
    const served = await p.ctl(["model", "serve", model, "--engine", "sim", "--replicas", "1", "--wait", "--json"]);
    assert.equal(served.code, 0, served.stderr);
  });
  after(async () => {
    await p?.stop();
  });

  it("a revoked key is refused within seconds, though the gateway had it cached", async () => {
    const k = await newKey();
    await ask(k.key); // now cached for 60 s
    const r = await p.ctl(["keys", "revoke", k.id]);
    assert.equal(r.code, 0, r.stderr);
    await waitFor("the revocation to reach the gateway", () => ask(k.key).then(() => false, (e: unknown) => e instanceof OpenAI.AuthenticationError), 3_000, 50);
    await assert.rejects(ask(k.key), (e: unknown) => e instanceof OpenAI.AuthenticationError && (e.error as { code?: string }).code === "revoked_api_key");
  });

  it("an expired key gets 401, a model-restricted key 403 for other models", async () => {
    const expired = await newKey("--expires", new Date(Date.now() - 1000).toISOString());
    await assert.rejects(ask(expired.key), (e: unknown) => e instanceof OpenAI.AuthenticationError && (e.error as { code?: string }).code === "expired_api_key");
    const restricted = await newKey("--model", "e2e-keys-*");
    await ask(restricted.key);
    const other = await newKey("--model", "something-else");
    await assert.rejects(ask(other.key), (e: unknown) => e instanceof OpenAI.PermissionDeniedError && (e.error as { code?: string }).code === "model_not_allowed");
  });

  it("rotation: both keys work during the overlap, then only the new one", async () => {
    const old = await newKey();
    await ask(old.key);
    const r = await p.ctl(["keys", "rotate", old.id, "--overlap", "3", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const fresh = JSON.parse(r.stdout) as { key: string; old: { expiresAt: string } };
    assert.notEqual(fresh.key, old.key);
    await ask(old.key);
    await ask(fresh.key);
    await new Promise((res) => setTimeout(res, Date.parse(fresh.old.expiresAt) - Date.now() + 100));
    await assert.rejects(ask(old.key), OpenAI.AuthenticationError);
    await ask(fresh.key);
  });

  it("orgs, teams and projects form a tree; a key's band and its own limits; a team's limit holds its projects' keys", async () => {
    const json = async <T>(args: string[]): Promise<T> => {
      const r = await p.ctl([...args, "--json"]);
      assert.equal(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
      return JSON.parse(r.stdout) as T;
    };
    assert.equal((await json<{ created: boolean }>(["orgs", "create", "acme"])).created, true);
    assert.equal((await json<{ created: boolean }>(["orgs", "create", "acme"])).created, false, "creating again is not an error");
    assert.equal((await json<{ name: string }>(["teams", "create", "acme/search"])).name, "acme/search");
    const noOrg = await p.ctl(["teams", "create", "nobody/x"]);
    assert.equal(noOrg.code, 1);
    assert.match(noOrg.stderr, /no org 'nobody'; orgs: .*acme/);
    const noTeam = await p.ctl(["projects", "create", "lost", "--team", "acme/nope"]);
    assert.equal(noTeam.code, 1);
    assert.match(noTeam.stderr, /no team 'acme\/nope'; teams: acme\/search/);
    await json(["projects", "create", "search-api", "--team", "acme/search"]);
    assert.equal((await json<{ name: string; team: string }[]>(["projects", "list"])).find((x) => x.name === "search-api")?.team, "acme/search");
    assert.deepEqual((await json<{ name: string; projects: number }[]>(["teams", "list"])).find((t) => t.name === "acme/search"), { ...(await json<{ name: string }[]>(["teams", "list"])).find((t) => t.name === "acme/search"), projects: 1 });

    const a = await json<{ id: string; key: string; band: string }>(["keys", "create", "--project", "search-api", "--band", "batch"]);
    assert.equal(a.band, "batch");
    assert.equal((await json<{ id: string; band: string }[]>(["keys", "list", "--project", "search-api"])).find((k) => k.id === a.id)?.band, "batch");
    const badBand = await p.ctl(["keys", "create", "--project", "search-api", "--band", "urgent"]);
    assert.equal(badBand.code, 1);
    assert.match(badBand.stderr, /band/);

    // The key's own limit, then the team's: both counted in Redis, both answered with 429.
    assert.equal((await p.ctl(["keys", "limits", a.id, "--rpm", "2"])).code, 0);
    await limitsLoaded(p, model);
    await ask(a.key);
    await ask(a.key);
    await assert.rejects(ask(a.key), OpenAI.RateLimitError);
    assert.equal((await p.ctl(["keys", "limits", "clear", a.id])).code, 0);
    assert.equal((await p.ctl(["limits", "set", "team", "acme/search", "--rpm", "3"])).code, 0);
    const b = await json<{ key: string }>(["keys", "create", "--project", "search-api"]);
    await limitsLoaded(p, model);
    for (let i = 0; i < 3; i++) await ask(b.key);
    await assert.rejects(ask(b.key), OpenAI.RateLimitError, "the team's limit covers a key of its project");
    await assert.rejects(ask(a.key), OpenAI.RateLimitError, "…and every other key of it");
    assert.ok((await json<{ scope: string; name: string }[]>(["limits", "list"])).some((l) => l.scope === "team" && l.name === "acme/search"));
  });

  it("unknown ids and bad bodies are refused naming the field", async () => {
    const r = await fetch(`${p.adminUrl}/api/v1/keys/nope/revoke`, { method: "POST", headers: { authorization: `Bearer ${p.adminToken}` } });
    assert.equal(r.status, 404);
    assert.equal(((await r.json()) as { error: { field: string } }).error.field, "id");
    const bad = await fetch(`${p.adminUrl}/api/v1/models/${model}/prices`, {
      method: "PUT",
      headers: { authorization: `Bearer ${p.adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ promptPerMTok: -1 }),
    });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { error: { field: string } }).error.field, "promptPerMTok");
    const noProject = await p.ctl(["keys", "create", "--project", "nope"]);
    assert.match(noProject.stderr, /projects: keys/);
  });

  it("prices cost each request in the ledger; the usage report sums it (JSON, CSV, ctl)", async () => {
    const r = await p.ctl(["prices", "set", model, "--prompt", "1000", "--completion", "2000"]);
    assert.equal(r.code, 0, r.stderr);
    await new Promise((res) => setTimeout(res, 5_500)); // the gateways' price refresh
    const k = await newKey();
    const out = await ask(k.key);
    const want = out.usage!.prompt_tokens * 1000 + out.usage!.completion_tokens * 2000;
    type Row = { key: string; model: string; requests: number; costMicros: number };
    const rows = await waitFor(
      "the costed event in the report",
      async () => {
        const rep = await p.admin<{ data: Row[] }>("GET", `/usage?by=key,model,project,day`);
        const mine = rep.data.filter((x) => x.key === k.id);
        return mine.length && mine[0]!.costMicros > 0 ? mine : null;
      },
      15_000,
    );
    assert.equal(rows[0]!.requests, 1);
    assert.equal(rows[0]!.costMicros, want);
    const csv = await fetch(`${p.adminUrl}/api/v1/usage?by=model&format=csv`, { headers: { authorization: `Bearer ${p.adminToken}` } });
    assert.match(csv.headers.get("content-type")!, /text\/csv/);
    const text = await csv.text();
    assert.match(text, /^model,requests,promptTokens,cachedTokens,completionTokens,cost\r\n/);
    assert.ok(text.includes(`${model},`));
    const ctl = await p.ctl(["usage", "--by", "project", "--csv"]);
    assert.equal(ctl.code, 0, ctl.stderr);
    assert.match(ctl.stdout, /^project,requests,/);
    assert.match(ctl.stdout, /\r\nkeys,\d+,/);
    const badBy = await p.ctl(["usage", "--by", "colour"]);
    assert.equal(badBy.code, 1);
    assert.match(badBy.stderr, /by/);
  });

  it("every admin change is in the audit log, with no secret in it", async () => {
    const r = await p.ctl(["audit", "--since", "1h", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const events = JSON.parse(r.stdout) as { actor: string; action: string; target: string }[];
    const actions = new Set(events.map((e) => e.action));
    for (const a of ["project.create", "key.create", "key.revoke", "key.rotate", "model.prices"]) assert.ok(actions.has(a), `${a} audited: ${[...actions].join(", ")}`);
    assert.ok(events.every((e) => e.actor === "admin-token"), "the admin token is the break-glass actor");
    assert.ok(!r.stdout.includes("sk-llmgw-") || !/sk-llmgw-[A-Za-z0-9_-]{20,}/.test(r.stdout), "no key in the audit log");
    assert.ok(!/"hash"/.test(r.stdout));
  });
});
