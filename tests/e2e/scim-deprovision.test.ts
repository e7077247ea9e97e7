// SCIM provisioning end to end on a real platform: an identity provider (this test, speaking SCIM
// over HTTP with a token from `ctl scim token create`) provisions a person and puts them in a group
// the group mapping rules turn into a project membership; the person's own key then works. Taken
// out of the group, deactivated or deleted, the key stops working within seconds (every gateway's
// key cache is told over the change feed) and their sessions end.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { waitFor } from "../../common/children.ts";
import { redis as redisClient } from "../../common/redis.ts";
import { SessionStore } from "../../gateway/people/sessions.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

describe("SCIM provisioning and deprovisioning", () => {
  let p: Platform;
  let token: string;
  let db: pg.Client;
  const model = uniqueModel("scim");
  const redis = redisClient(process.env.REDIS_URL);

  const scim = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${p.clientUrl}/scim/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/scim+json" },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await r.text();
    return { status: r.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
  };
  const chat = async (key: string) => {
    const r = await fetch(`${p.clientUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hello" }], max_tokens: 4 }),
    });
    await r.arrayBuffer();
    return r.status;
  };
  /** A key of project `scim-eng` owned by the person (as POST /me/keys makes one). */
  const personKey = async (personId: string) => {
    const k = await p.newKey({ project: "scim-eng" });
    await db.query("UPDATE api_keys SET person_id = $1 WHERE id = $2", [personId, k.id]);
    return k.key;
  };
  const memberships = async (personId: string) =>
    (await db.query<{ scope: string; role: string; source: string }>("SELECT scope, role, source FROM memberships WHERE person_id = $1", [personId])).rows;

  before(async () => {
    p = await startPlatform();
    db = new pg.Client({ connectionString: p.env.DATABASE_URL });
    await db.connect();
    await p.serve(model);
    await p.newKey({ project: "scim-eng" });
    await p.admin("POST", "/group-mappings", { provider: "scim", group: "eng", scope: "project", name: "scim-eng", role: "member" });
    const made = await p.ctl(["scim", "token", "create", "okta", "--json"]);
    assert.equal(made.code, 0, made.stderr);
    token = (JSON.parse(made.stdout) as { token: string }).token;
  });

  after(async () => {
    await db?.end();
    redis.disconnect();
    await p?.stop();
  });

  it("a provisioned person in a mapped group has a working key; out of the group, deactivated or deleted, it stops", async () => {
    const user = await scim("POST", "/Users", { schemas: [USER], userName: "grace@example.com", externalId: "00u-grace", name: { givenName: "Grace", familyName: "Hopper" }, emails: [{ value: "grace@example.com", primary: true }], active: true });
    assert.equal(user.status, 201, JSON.stringify(user.body));
    const personId = user.body.id as string;
    const person = (await db.query("SELECT name, email, disabled FROM people WHERE id = $1", [personId])).rows[0] as { name: string; email: string; disabled: boolean };
    assert.deepEqual(person, { name: "Grace Hopper", email: "grace@example.com", disabled: false });
    assert.equal((await db.query("SELECT subject FROM person_identities WHERE person_id = $1 AND provider = 'scim'", [personId])).rows[0]?.subject, "00u-grace");
    const key = await personKey(personId);
    // No membership yet: the person's key is refused.
    assert.equal(await chat(key), 401);

    const group = await scim("POST", "/Groups", { schemas: [GROUP], displayName: "eng", members: [{ value: personId }] });
    assert.equal(group.status, 201, JSON.stringify(group.body));
    assert.deepEqual(await memberships(personId), [{ scope: "project", role: "member", source: "scim" }]);
    await waitFor("the key to work once the person is in the group", async () => (await chat(key)) === 200, 15_000, 100);

    // Out of the group (Okta's PATCH): the membership goes, and the key stops.
    const gid = group.body.id as string;
    const out = await scim("PATCH", `/Groups/${gid}`, { schemas: [PATCH], Operations: [{ op: "remove", path: `members[value eq "${personId}"]` }] });
    assert.equal(out.status, 200, JSON.stringify(out.body));
    assert.deepEqual(await memberships(personId), []);
    await waitFor("the key to stop once the person left the group", async () => (await chat(key)) === 401, 15_000, 100);
    // Back in (Entra ID's PATCH, capitalised op): works again.
    assert.equal((await scim("PATCH", `/Groups/${gid}`, { schemas: [PATCH], Operations: [{ op: "Add", path: "members", value: [{ value: personId }] }] })).status, 200);
    await waitFor("the key to work again", async () => (await chat(key)) === 200, 15_000, 100);

    // Deactivated: the key stops within seconds and the person's sessions end.
    const sessions = new SessionStore(redis);
    const session = await sessions.create(personId, "test");
    assert.ok(await sessions.get(session.token));
    const off = await scim("PATCH", `/Users/${personId}`, { schemas: [PATCH], Operations: [{ op: "replace", path: "active", value: false }] });
    assert.equal(off.status, 200, JSON.stringify(off.body));
    assert.equal(off.body.active, false);
    await waitFor("the key to stop once the person is deactivated", async () => (await chat(key)) === 401, 15_000, 100);
    assert.equal(await sessions.get(session.token), null);
    assert.equal((await db.query("SELECT disabled FROM people WHERE id = $1", [personId])).rows[0]?.disabled, true);

    // Deleted: the person, their identities, memberships and keys go.
    const again = await scim("PATCH", `/Users/${personId}`, { schemas: [PATCH], Operations: [{ op: "replace", value: { active: true } }] });
    assert.equal(again.body.active, true);
    await waitFor("the key to work once reactivated", async () => (await chat(key)) === 200, 15_000, 100);
    assert.equal((await scim("DELETE", `/Users/${personId}`)).status, 204);
    await waitFor("the key to stop once the person is deleted", async () => (await chat(key)) === 401, 15_000, 100);
    assert.equal((await db.query("SELECT count(*)::int AS n FROM api_keys WHERE person_id = $1", [personId])).rows[0]?.n, 0);
    assert.equal((await scim("GET", `/Groups/${gid}`)).body.members, undefined);

    // Every change is in the audit log, by `scim`.
    const audit = (await db.query<{ action: string }>("SELECT action FROM audit_events WHERE actor = 'scim' AND target = $1 ORDER BY at", [`person/${personId}`])).rows.map((r) => r.action);
    assert.deepEqual(audit, ["scim.user.create", "scim.user.update", "scim.user.update", "scim.user.delete"]);
    assert.ok((await db.query("SELECT 1 FROM audit_events WHERE actor = 'scim' AND action = 'scim.group.update' AND target = $1", [`group/${gid}`])).rowCount! >= 2);
  });
});
