// An org-admin's people: they see the people who hold a role in their org (and only those roles),
// grant and remove roles inside their org, and nothing else. Another org's person, membership,
// team or project is a 404 that changes nothing (no row, no audit), as is one that does not exist;
// a platform-wide role is a 403; making, disabling and deleting people stays platform-admin's.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startPeopleAdmin, twoOrgs, type PeopleAdmin } from "../helpers/people-admin.ts";

describe("an org-admin's people", () => {
  let s: PeopleAdmin;
  let orgs: Awaited<ReturnType<typeof twoOrgs>>;
  let oa: { id: string; token: string };
  let inA: { id: string };
  let inB: { id: string };
  let inBoth: { id: string };

  before(async () => {
    s = await startPeopleAdmin();
    orgs = await twoOrgs(s.db);
    oa = await s.person("oa", [{ scope: "org", scopeId: orgs.a.org.id, role: "org-admin" }]);
    inA = await s.person("in-a", [{ scope: "project", scopeId: orgs.a.project.id, role: "member" }]);
    inB = await s.person("in-b", [{ scope: "project", scopeId: orgs.b.project.id, role: "member" }]);
    inBoth = await s.person("in-both", [
      { scope: "project", scopeId: orgs.a.project.id, role: "member" },
      { scope: "org", scopeId: orgs.b.org.id, role: "viewer" },
    ]);
  });
  after(async () => {
    await s?.close();
  });

  it("lists and shows only the people and roles inside their org", async () => {
    const listed = ((await s.call(oa.token, "GET", "/people")).body.data as { id: string; memberships: number }[]).map((p) => p.id);
    assert.ok(listed.includes(inA.id) && listed.includes(inBoth.id) && listed.includes(oa.id), "their org's people");
    assert.ok(!listed.includes(inB.id), "not another org's");
    const both = await s.call(oa.token, "GET", `/people/${inBoth.id}`);
    assert.equal(both.status, 200);
    assert.deepEqual((both.body.memberships as { name: string }[]).map((m) => m.name), [orgs.a.project.name], "their role in org B is not shown");
    const other = await s.call(oa.token, "GET", `/people/${inB.id}`);
    assert.equal(other.status, 404);
    assert.equal(other.body.error?.field, "id");
  });

  it("grants and removes roles inside their org; the audit rows name them", async () => {
    const team = await s.call(oa.token, "POST", `/people/${inA.id}/memberships`, { scope: "team", name: orgs.a.teamPath, role: "viewer" });
    assert.equal(team.status, 201, JSON.stringify(team.body));
    const admin = await s.call(oa.token, "POST", `/people/${inA.id}/memberships`, { scope: "org", name: orgs.a.org.name, role: "org-admin" });
    assert.equal(admin.status, 201, "another admin of their own org");
    assert.equal((await s.call(oa.token, "DELETE", `/people/${inA.id}/memberships/${String(team.body.id)}`)).status, 200);
    assert.equal((await s.call(oa.token, "DELETE", `/people/${inA.id}/memberships/${String(admin.body.id)}`)).status, 200);
    const rows = await s.db.auditEvent.findMany({ where: { target: `person/${inA.id}` }, orderBy: { at: "asc" } });
    assert.deepEqual(rows.map((r) => [r.action, r.personId]), [["membership.add", oa.id], ["membership.add", oa.id], ["membership.remove", oa.id], ["membership.remove", oa.id]]);
  });

  it("refuses another org's and missing scopes and memberships with a 404, a platform role with a 403, and people's lifecycle; nothing changes", async () => {
    const b = orgs.b;
    const [bMember] = await s.db.membership.findMany({ where: { personId: inB.id } });
    const [bViewer] = await s.db.membership.findMany({ where: { personId: inBoth.id, scope: "org" } });
    const before = { audits: await s.db.auditEvent.count(), memberships: await s.db.membership.count(), people: await s.db.person.count({ where: { disabled: false } }) };
    const refusals: [string, string, unknown, number, string | null][] = [
      ["POST", `/people/${inA.id}/memberships`, { scope: "project", name: b.project.name, role: "member" }, 404, "name"],
      ["POST", `/people/${inA.id}/memberships`, { scope: "team", name: b.teamPath, role: "viewer" }, 404, "name"],
      ["POST", `/people/${inA.id}/memberships`, { scope: "org", name: b.org.name, role: "org-admin" }, 404, "name"],
      ["POST", `/people/${inA.id}/memberships`, { scope: "org", name: "no-such-org", role: "org-admin" }, 404, "name"],
      ["POST", `/people/${inB.id}/memberships`, { scope: "project", name: b.project.name, role: "member" }, 404, "name"],
      ["POST", `/people/${inA.id}/memberships`, { scope: "platform", role: "viewer" }, 403, "scope"],
      ["POST", `/people/${inA.id}/memberships`, { scope: "platform", role: "platform-admin" }, 403, "scope"],
      ["DELETE", `/people/${inB.id}/memberships/${bMember!.id}`, undefined, 404, "membershipId"],
      ["DELETE", `/people/${inBoth.id}/memberships/${bViewer!.id}`, undefined, 404, "membershipId"],
      ["POST", "/people", { name: "Mallory" }, 403, null],
      ["POST", `/people/${inA.id}/disable`, {}, 403, null],
      ["DELETE", `/people/${inA.id}`, undefined, 403, null],
      ["GET", "/group-mappings", undefined, 403, null],
    ];
    for (const [method, path, body, status, field] of refusals) {
      const r = await s.call(oa.token, method, path, body);
      assert.equal(r.status, status, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error?.field, field, `${method} ${path}`);
    }
    // A missing org and another org's read the same: nothing says which exists.
    const [other, missing] = await Promise.all(
      [b.org.name, "no-such-org"].map((name) => s.call(oa.token, "POST", `/people/${inA.id}/memberships`, { scope: "org", name, role: "org-admin" })),
    );
    assert.equal(other!.body.error!.message.replace(b.org.name, "X"), missing!.body.error!.message.replace("no-such-org", "X"));
    assert.deepEqual({ audits: await s.db.auditEvent.count(), memberships: await s.db.membership.count(), people: await s.db.person.count({ where: { disabled: false } }) }, before);
  });
});
