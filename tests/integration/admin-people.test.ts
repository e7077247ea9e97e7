// People on the admin API, over real PostgreSQL and Redis: people, memberships and group mappings
// as a platform-admin person (audit rows name them; the admin token's say admin-token); /me; the
// client port's copy refusing the admin token; the console cookie's CSRF check; malformed requests
// refused, changing nothing; a person's own key (through the API and `ctl keys create --mine`) that
// every gateway's key cache drops, through the change feed, once the person is disabled or leaves
// the project, while their session turns 401.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { subscribeChanges } from "../../common/change-feed.ts";
import { LLMGW_BIN, waitFor } from "../../common/children.ts";
import { redis as redisClient } from "../../common/redis.ts";
import { KeyCache } from "../../gateway/auth/key-cache.ts";
import { ADMIN_TOKEN, startPeopleAdmin, twoOrgs, type PeopleAdmin } from "../helpers/people-admin.ts";

const ctl = (args: string[], env: NodeJS.ProcessEnv) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [LLMGW_BIN, "ctl", ...args], { env: { ...process.env, LLMGW_ADMIN_TOKEN: "", ...env }, encoding: "utf8" }, (err, stdout, stderr) =>
      resolve({ code: !err ? 0 : typeof err.code === "number" ? err.code : 1, stdout, stderr }),
    );
  });

describe("people, memberships, group mappings and people's own keys", () => {
  let s: PeopleAdmin;
  let orgs: Awaited<ReturnType<typeof twoOrgs>>;
  let admin: { id: string; token: string; csrf: string };

  before(async () => {
    s = await startPeopleAdmin();
    orgs = await twoOrgs(s.db);
    admin = await s.person("root", [{ scope: "platform", role: "platform-admin" }]);
  });
  after(async () => {
    await s?.close();
  });

  it("creates, shows, disables, enables and deletes people and memberships; audit rows name who did it", async () => {
    const made = await s.call(admin.token, "POST", "/people", { name: "Ada", email: "Ada@Example.test" });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const id = String(made.body.id);
    assert.equal(made.body.email, "ada@example.test", "emails are kept lower-cased");
    assert.equal((await s.call(admin.token, "POST", "/people", { name: "Ada 2", email: "ada@example.test" })).status, 409);
    const m = await s.call(admin.token, "POST", `/people/${id}/memberships`, { scope: "project", name: orgs.a.project.name, role: "member" });
    assert.equal(m.status, 201, JSON.stringify(m.body));
    assert.equal(m.body.name, orgs.a.project.name);
    const shown = await s.call(admin.token, "GET", `/people/${id}`);
    assert.deepEqual((shown.body.memberships as { role: string; scope: string }[]).map((x) => `${x.role}@${x.scope}`), ["member@project"]);
    assert.equal((await s.call(admin.token, "POST", `/people/${id}/disable`, {})).body.disabled, true);
    assert.equal((await s.call(admin.token, "POST", `/people/${id}/enable`, {})).body.disabled, false);
    assert.equal((await s.call(admin.token, "DELETE", `/people/${id}/memberships/${String(m.body.id)}`)).status, 200);
    const gm = await s.call(admin.token, "POST", "/group-mappings", { provider: "oidc:corp", group: "ml-team", scope: "org", name: orgs.a.org.name, role: "org-admin" });
    assert.equal(gm.status, 201, JSON.stringify(gm.body));
    assert.equal((await s.call(admin.token, "POST", "/group-mappings", { provider: "oidc:corp", group: "ml-team", scope: "org", name: orgs.a.org.name, role: "org-admin" })).status, 409);
    assert.equal((await s.call(admin.token, "GET", `/group-mappings/${String(gm.body.id)}`)).body.group, "ml-team");
    assert.equal((await s.call(admin.token, "DELETE", `/group-mappings/${String(gm.body.id)}`)).status, 200);
    assert.equal((await s.call(admin.token, "DELETE", `/people/${id}`)).status, 200);
    assert.equal((await s.call(admin.token, "GET", `/people/${id}`)).status, 404);

    const rows = await s.db.auditEvent.findMany({ where: { OR: [{ target: `person/${id}` }, { target: `group-mapping/${String(gm.body.id)}` }] }, orderBy: { at: "asc" } });
    assert.deepEqual(rows.map((r) => r.action), ["person.create", "membership.add", "person.disable", "person.enable", "membership.remove", "group-mapping.create", "group-mapping.delete", "person.delete"]);
    assert.ok(rows.every((r) => r.actor === `person:${admin.id}` && r.personId === admin.id), "every row names the person");
    // The break-glass token's changes say so, and name no person.
    const org = await s.call(ADMIN_TOKEN, "POST", "/orgs", { name: `glass-${orgs.a.org.name}` });
    const row = await s.db.auditEvent.findFirstOrThrow({ where: { target: `org/glass-${orgs.a.org.name}` } });
    assert.equal(org.status, 201);
    assert.deepEqual([row.actor, row.personId], ["admin-token", null]);
  });

  it("GET /me names the person, their memberships and roles; the client port's copy takes sessions, never the admin token", async () => {
    const oa = await s.person("me-oa", [{ scope: "org", scopeId: orgs.a.org.id, role: "org-admin" }]);
    for (const at of [s.base, s.peopleBase]) {
      const me = await s.call(oa.token, "GET", "/me", undefined, {}, at);
      assert.equal(me.status, 200);
      assert.equal((me.body.person as { id: string }).id, oa.id);
      assert.deepEqual(me.body.roles, ["org-admin"]);
      assert.equal((me.body.memberships as { name: string }[])[0]!.name, orgs.a.org.name);
      assert.equal(me.body.csrf, oa.csrf);
    }
    const glass = await s.call(ADMIN_TOKEN, "GET", "/projects", undefined, {}, s.peopleBase);
    assert.equal(glass.status, 401);
    assert.match(glass.body.error!.message, /sign in/);
    assert.equal((await s.call(ADMIN_TOKEN, "GET", "/me")).status, 403, "the admin token is no person");
    assert.equal((await s.call("llmgw-sess-not-a-session", "GET", "/me")).status, 401);
  });

  it("a cookie session's changes need x-csrf-token; a bearer session's do not", async () => {
    const cookie = { cookie: `other=1; llmgw_session=${encodeURIComponent(admin.token)}` };
    const body = { name: "Csrf" };
    const bare = await s.call(null, "POST", "/people", body, cookie, s.peopleBase);
    assert.equal(bare.status, 403);
    assert.equal(bare.body.error?.field, "x-csrf-token");
    assert.equal((await s.call(null, "POST", "/people", body, { ...cookie, "x-csrf-token": "wrong" }, s.peopleBase)).status, 403);
    assert.equal(await s.db.person.count({ where: { name: "Csrf" } }), 0);
    assert.equal((await s.call(null, "GET", "/people", undefined, cookie, s.peopleBase)).status, 200, "reads need no CSRF value");
    assert.equal((await s.call(null, "POST", "/people", body, { ...cookie, "x-csrf-token": admin.csrf }, s.peopleBase)).status, 201);
  });

  it("refuses malformed people, membership and mapping requests with the field at fault, changing nothing", async () => {
    const target = String((await s.call(admin.token, "POST", "/people", { name: "Target" })).body.id);
    const counts = async () => [await s.db.person.count(), await s.db.membership.count(), await s.db.groupMapping.count(), await s.db.auditEvent.count()];
    const before = await counts();
    const bad: [string, string, unknown, number, string | null][] = [
      ["POST", "/people", {}, 400, "name"],
      ["POST", "/people", { name: "   " }, 400, "name"],
      ["POST", "/people", { name: "X", email: "not-an-email" }, 400, "email"],
      ["POST", "/people", { name: "X", admin: true }, 400, null],
      ["POST", "/people", "{not json", 400, null],
      ["POST", `/people/${target}/memberships`, { scope: "project", name: orgs.a.project.name, role: "god" }, 400, "role"],
      ["POST", `/people/${target}/memberships`, { scope: "platform", name: "x", role: "viewer" }, 400, null],
      ["POST", `/people/${target}/memberships`, { scope: "project", name: orgs.a.project.name, role: "org-admin" }, 400, "role"],
      ["POST", `/people/${target}/memberships`, { scope: "platform", role: "member" }, 400, "role"],
      ["POST", `/people/${target}/memberships`, { scope: "org", role: "org-admin" }, 400, "name"],
      ["POST", `/people/${target}/memberships`, { scope: "galaxy", name: "x", role: "viewer" }, 400, "scope"],
      ["POST", `/people/${target}/memberships`, { scope: "org", name: "no-such-org", role: "org-admin" }, 404, "name"],
      ["POST", `/people/${target}/memberships`, { scope: "team", name: "no-slash", role: "member" }, 404, "name"],
      ["POST", "/people/no-such-person/memberships", { scope: "platform", role: "viewer" }, 404, "id"],
      ["DELETE", `/people/${target}/memberships/no-such-membership`, undefined, 404, "membershipId"],
      ["POST", "/group-mappings", { scope: "platform", role: "viewer" }, 400, "group"],
      ["POST", "/group-mappings", { group: "g", provider: "", scope: "platform", role: "viewer" }, 400, "provider"],
      ["POST", "/group-mappings", { group: "g", scope: "project", name: orgs.a.project.name, role: "operator" }, 400, "role"],
      ["DELETE", "/group-mappings/no-such-mapping", undefined, 404, "id"],
    ];
    for (const [method, path, body, status, field] of bad) {
      const r = await s.call(admin.token, method, path, body);
      assert.equal(r.status, status, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error?.field, field, `${method} ${path} ${JSON.stringify(body)}: ${r.body.error?.message}`);
      assert.ok((r.body.error?.message.length ?? 0) > 5, "a message that says what is wrong");
    }
    assert.deepEqual(await counts(), before);
  });

  it("a person's own key works while they may use the project: disabled or gone from it, every gateway drops it within seconds", async () => {
    // A gateway's key cache, evicting what the change feed names, as gateway/server.ts wires it.
    const keys = new KeyCache(s.db);
    const sub = redisClient(process.env.REDIS_URL);
    await subscribeChanges(sub, (c) => void (c.kind === "key" && keys.evict(c.hash)), () => undefined);
    try {
      const mb = await s.person("keyholder", [{ scope: "project", scopeId: orgs.a.project.id, role: "member" }]);
      const refused = await s.call(mb.token, "POST", "/me/keys", { project: orgs.b.project.name });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error?.field, "project");
      assert.equal((await s.call(mb.token, "POST", "/me/keys", { project: orgs.a.project.name, band: "warp" })).status, 400);
      assert.equal(await s.db.apiKey.count({ where: { personId: mb.id } }), 0);

      // Through ctl, with the session in LLMGW_SESSION.
      const made = await ctl(["keys", "create", "--mine", "--project", orgs.a.project.name, "--name", "laptop", "--json"], { LLMGW_SESSION: mb.token, LLMGW_ADMIN_URL: s.peopleBase });
      assert.equal(made.code, 0, made.stderr);
      const k = JSON.parse(made.stdout) as { id: string; key: string; project: string };
      assert.equal(k.project, orgs.a.project.name);
      const listed = await ctl(["keys", "list", "--mine", "--json"], { LLMGW_SESSION: mb.token, LLMGW_ADMIN_URL: s.peopleBase });
      assert.deepEqual((JSON.parse(listed.stdout) as { id: string }[]).map((x) => x.id), [k.id]);
      const info = await keys.lookup(k.key);
      assert.equal(info?.revoked, false);
      assert.equal(info?.personId, mb.id, "usage rows made with it carry the person");

      // Leaving the project: the key cache drops it and reloads it as ended.
      const membership = (await s.db.membership.findFirstOrThrow({ where: { personId: mb.id } })).id;
      assert.equal((await s.call(admin.token, "DELETE", `/people/${mb.id}/memberships/${membership}`)).status, 200);
      await waitFor("the key to end with the membership", async () => (await keys.lookup(k.key))?.revoked === true, 10_000, 50);
      assert.equal((await s.call(mb.token, "GET", "/me")).status, 200, "their session lives on: only the project was left");

      // Back in the project, then disabled: key and session end.
      assert.equal((await s.call(admin.token, "POST", `/people/${mb.id}/memberships`, { scope: "project", name: orgs.a.project.name, role: "member" })).status, 201);
      keys.evict((await s.db.apiKey.findUniqueOrThrow({ where: { id: k.id } })).hash);
      assert.equal((await keys.lookup(k.key))?.revoked, false);
      assert.equal((await s.call(admin.token, "POST", `/people/${mb.id}/disable`, {})).status, 200);
      await waitFor("the key to end with the person", async () => (await keys.lookup(k.key))?.revoked === true, 10_000, 50);
      const me = await s.call(mb.token, "GET", "/me");
      assert.equal(me.status, 401);
      assert.equal((await s.call(mb.token, "GET", "/me", undefined, {}, s.peopleBase)).status, 401);
      const noSession = await ctl(["keys", "list", "--mine"], { LLMGW_SESSION: mb.token, LLMGW_ADMIN_URL: s.peopleBase });
      assert.equal(noSession.code, 1);
      assert.match(noSession.stderr, /sign in again/);
    } finally {
      sub.disconnect();
    }
  });

  it("ctl people, memberships and group-mappings, with --json as the API answers", async () => {
    const env = { LLMGW_ADMIN_TOKEN: ADMIN_TOKEN, LLMGW_ADMIN_URL: s.base };
    const run = async (args: string[]) => {
      const r = await ctl([...args, "--json"], env);
      assert.equal(r.code, 0, `ctl ${args.join(" ")}: ${r.stderr}`);
      return JSON.parse(r.stdout) as Record<string, unknown>;
    };
    const p = await run(["people", "create", "--name", "Linus", "--email", `linus-${orgs.a.org.name}@example.test`]);
    const m = await run(["memberships", "add", String(p.id), "--role", "viewer", "--scope", "team", "--name", orgs.a.teamPath]);
    assert.deepEqual([m.role, m.scope, m.name], ["viewer", "team", orgs.a.teamPath]);
    assert.deepEqual(((await run(["memberships", "list", String(p.id)])) as unknown as { id: string }[]).map((x) => x.id), [m.id]);
    const gm = await run(["group-mappings", "create", "--group", "readers", "--role", "viewer", "--scope", "platform"]);
    assert.equal(gm.provider, null, "no provider: the rule applies to every one");
    const changed = await run(["group-mappings", "set", String(gm.id), "--group", "readers", "--provider", "ldap", "--role", "member", "--scope", "project", "--name", orgs.a.project.name]);
    assert.deepEqual([changed.provider, changed.role, changed.name], ["ldap", "member", orgs.a.project.name]);
    assert.ok(((await run(["group-mappings", "list"])) as unknown as { id: string }[]).some((x) => x.id === gm.id));
    assert.equal((await run(["people", "disable", String(p.id)])).disabled, true);
    assert.ok(((await run(["people", "list"])) as unknown as { id: string; disabled: boolean }[]).some((x) => x.id === p.id && x.disabled));
    const bad = await ctl(["memberships", "add", String(p.id), "--role", "operator", "--scope", "org", "--name", orgs.a.org.name], env);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /at org scope the role is one of org-admin, member, viewer/);
    // A person's own session is no platform-admin: ctl says what the API said.
    const viewer = await s.person("ctl-viewer", [{ scope: "platform", role: "viewer" }]);
    const refused = await ctl(["people", "list"], { LLMGW_ADMIN_TOKEN: viewer.token, LLMGW_ADMIN_URL: s.base });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /GET \/api\/v1\/people needs platform-admin or org-admin; your roles \(viewer\) may not/);
    assert.equal((await run(["people", "delete", String(p.id)])).deleted, true);
  });
});
