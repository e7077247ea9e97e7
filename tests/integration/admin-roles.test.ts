// Roles on every admin route: each operation of the admin OpenAPI document is called as the admin
// token and as a person of each role, and the set let through is checked against what issue 31
// gives each role (written here by tag, apart from gateway/admin-api/roles.ts's table); the rest
// must be the role check's 403 in the admin API's shape. Then org-admin's scope: org A's admin
// neither sees nor changes org B's projects, keys, limits or usage.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { adminOperations } from "../../gateway/admin-api/openapi.ts";
import { ROUTE_ROLES, operationKey } from "../../gateway/admin-api/roles.ts";
import type { Operation } from "../../gateway/http/openapi-build.ts";
import { ADMIN_TOKEN, startPeopleAdmin, twoOrgs, type PeopleAdmin } from "../helpers/people-admin.ts";

const V1 = "/api/v1";
type Who = "admin-token" | "platform-admin" | "operator" | "org-admin" | "member" | "viewer" | "nobody";
const WHO: Who[] = ["admin-token", "platform-admin", "operator", "org-admin", "member", "viewer", "nobody"];

/** Issue 31's roles, by the document's tags. */
function expected(who: Who, op: Operation): boolean {
  const mine = op.path === `${V1}/me` || op.path.startsWith(`${V1}/me/`);
  if (who === "admin-token") return !mine;
  if (mine) return true;
  if (who === "platform-admin") return true;
  const doc = op.method === "get" && op.path === `${V1}/openapi.json`;
  const readModels = op.method === "get" && (op.path === `${V1}/models` || op.path === `${V1}/models/:name`);
  switch (who) {
    case "operator":
      return doc || (["models", "catalog", "operations", "nodes", "slurm", "training", "notifications", "router"].includes(op.tag) && !op.path.endsWith("/prices"));
    case "org-admin":
      return doc || readModels || (op.tag === "tenancy" && !(op.method === "post" && op.path === `${V1}/orgs`)) || op.tag === "limits" || op.tag === "usage" || orgPeople(op);
    case "member":
      return doc || readModels;
    case "viewer":
      return doc || readModels || op.tag === "usage";
    default:
      return false;
  }
}

/** The people routes an org-admin may call, inside their orgs: who holds a role there, and granting or removing one. */
const orgPeople = (op: Operation) =>
  (op.method === "get" && (op.path === `${V1}/people` || op.path === `${V1}/people/:id`)) ||
  (op.method === "post" && op.path === `${V1}/people/:id/memberships`) ||
  (op.method === "delete" && op.path === `${V1}/people/:id/memberships/:membershipId`);

const fill = (path: string) => path.replace(/\*[A-Za-z]+/g, "walk/w/serve/1").replace(/:[A-Za-z]+/g, "walk");

describe("roles on every admin route", () => {
  let s: PeopleAdmin;
  let orgs: Awaited<ReturnType<typeof twoOrgs>>;
  const tokens = new Map<Who, string>();

  before(async () => {
    s = await startPeopleAdmin();
    orgs = await twoOrgs(s.db);
    tokens.set("admin-token", ADMIN_TOKEN);
    tokens.set("platform-admin", (await s.person("pa", [{ scope: "platform", role: "platform-admin" }])).token);
    tokens.set("operator", (await s.person("op", [{ scope: "platform", role: "operator" }])).token);
    tokens.set("org-admin", (await s.person("oa", [{ scope: "org", scopeId: orgs.a.org.id, role: "org-admin" }])).token);
    tokens.set("member", (await s.person("mb", [{ scope: "project", scopeId: orgs.a.project.id, role: "member" }])).token);
    tokens.set("viewer", (await s.person("vw", [{ scope: "platform", role: "viewer" }])).token);
    tokens.set("nobody", (await s.person("nb", [])).token);
  });
  after(async () => {
    await s?.close();
  });

  it("the role table names only operations the document has (a stale row would hide a new route's default)", () => {
    const ops = new Set(adminOperations.map((o) => operationKey(o.method, o.path)));
    assert.deepEqual([...ROUTE_ROLES.keys()].filter((k) => !ops.has(k)), []);
  });

  it("walks every operation as each role: the allowed set is issue 31's, the rest a 403 naming the role needed", async () => {
    const ops = adminOperations.filter((o) => o.auth !== false);
    assert.ok(ops.length >= 70, `${ops.length} operations`);
    const wrong: string[] = [];
    const counts = new Map<Who, number>();
    for (const who of WHO) {
      for (const op of ops) {
        const body = ["post", "put", "patch"].includes(op.method) ? {} : undefined;
        const r = await s.call(tokens.get(who)!, op.method.toUpperCase(), fill(op.path).slice(V1.length), body);
        const refused = r.status === 403 && /needs /.test(r.body.error?.message ?? "");
        assert.notEqual(r.status, 401, `${who} ${op.method} ${op.path}: signed in`);
        if (refused) {
          assert.equal(r.body.error?.field, null);
          assert.match(r.body.error!.message, /platform-admin|signed-in person/, "names the role needed");
        } else counts.set(who, (counts.get(who) ?? 0) + 1);
        if (refused === expected(who, op)) wrong.push(`${who} ${op.method.toUpperCase()} ${op.path}: ${r.status} ${JSON.stringify(r.body).slice(0, 120)}`);
      }
    }
    assert.deepEqual(wrong, []);
    // Each role got through to some routes and not others: the walk checks what it means to.
    assert.equal(counts.get("platform-admin"), ops.length);
    assert.equal(counts.get("nobody"), 4, "a person with no role: /me and their own keys only");
  });

  it("org A's admin sees only org A's orgs, teams, projects, keys, limits and usage", async () => {
    const oa = tokens.get("org-admin")!;
    const names = async (path: string, field = "name") => ((await s.call(oa, "GET", path)).body.data as Record<string, unknown>[]).map((x) => x[field]);
    assert.deepEqual(await names("/orgs"), [orgs.a.org.name]);
    assert.deepEqual(await names("/teams"), [orgs.a.teamPath]);
    assert.deepEqual(await names("/projects"), [orgs.a.project.name]);
    assert.deepEqual(await names("/keys", "id"), [orgs.a.key.id]);
    assert.deepEqual((await names("/limits")).sort(), [orgs.a.org.name, orgs.a.project.name].sort(), "their org's own limit is shown, not set");
    assert.deepEqual(await names("/usage?by=project", "project"), [orgs.a.project.name]);
    // The same lists as the admin token see both orgs: the filter is the role's, not the data's.
    const all = ((await s.call(ADMIN_TOKEN, "GET", "/projects")).body.data as { name: string }[]).map((p) => p.name);
    assert.ok(all.includes(orgs.a.project.name) && all.includes(orgs.b.project.name));
    const viewerUsage = ((await s.call(tokens.get("viewer")!, "GET", "/usage?by=project")).body.data as { project: string }[]).map((u) => u.project);
    assert.ok(viewerUsage.includes(orgs.b.project.name), "a platform viewer reads every org's usage");
  });

  it("org A's admin cannot change org B's projects, keys or limits (404, nothing changed), nor their own org's limits (403)", async () => {
    const oa = tokens.get("org-admin")!;
    const b = orgs.b;
    const audits = await s.db.auditEvent.count();
    const refusals: [string, string, unknown, number, string][] = [
      ["PATCH", `/projects/${b.project.name}/settings`, { noStore: true }, 404, "name"],
      ["POST", "/keys", { project: b.project.name }, 404, "project"],
      ["POST", `/keys/${b.key.id}/revoke`, {}, 404, "id"],
      ["POST", `/keys/${b.key.id}/rotate`, {}, 404, "id"],
      ["PUT", `/limits/project/${b.project.name}`, { rpm: 1 }, 404, "name"],
      ["DELETE", `/limits/project/${b.project.name}`, undefined, 404, "name"],
      ["PUT", `/limits/key/${b.key.id}`, { rpm: 1 }, 404, "name"],
      ["PUT", `/limits/team/${encodeURIComponent(b.teamPath)}`, { rpm: 1 }, 404, "name"],
      ["PUT", `/limits/org/${orgs.a.org.name}`, { rpm: 1 }, 403, "scope"],
      ["POST", "/teams", { org: b.org.name, name: "intruders" }, 404, "org"],
      ["POST", "/projects", { name: `intruder-${b.project.name}`, team: b.teamPath }, 404, "team"],
      ["POST", "/projects", { name: b.project.name, team: orgs.a.teamPath }, 404, "name"],
    ];
    for (const [method, path, body, status, field] of refusals) {
      const r = await s.call(oa, method, path, body);
      assert.equal(r.status, status, `${method} ${path}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error?.field, field, `${method} ${path}`);
      assert.doesNotMatch(r.body.error!.message, /(projects|teams|orgs): /, "lists no other org's names");
    }
    assert.equal((await s.db.project.findUniqueOrThrow({ where: { id: b.project.id } })).noStore, false);
    assert.equal((await s.db.apiKey.findUniqueOrThrow({ where: { id: b.key.id } })).revokedAt, null);
    assert.equal(await s.db.apiKey.count({ where: { projectId: b.project.id } }), 1);
    assert.equal((await s.db.limit.findFirstOrThrow({ where: { scope: "project", scopeId: b.project.id } })).rpm, 10);
    assert.equal(await s.db.team.count({ where: { orgId: b.org.id } }), 1);
    assert.equal(await s.db.auditEvent.count(), audits, "nothing was changed, so nothing audited");
  });

  it("org A's admin runs org A: a team, a project, a key, a project's limits", async () => {
    const oa = tokens.get("org-admin")!;
    const a = orgs.a;
    assert.equal((await s.call(oa, "POST", "/teams", { org: a.org.name, name: "second" })).status, 201);
    const project = `more-${a.project.name}`;
    assert.equal((await s.call(oa, "POST", "/projects", { name: project, team: `${a.org.name}/second` })).status, 201);
    const key = await s.call(oa, "POST", "/keys", { project });
    assert.equal(key.status, 201);
    assert.equal((await s.call(oa, "PUT", `/limits/project/${project}`, { rpm: 5 })).status, 200);
    assert.equal((await s.call(oa, "POST", `/keys/${String(key.body.id)}/revoke`, {})).status, 200);
    const projects = ((await s.call(oa, "GET", "/projects")).body.data as { name: string }[]).map((p) => p.name).sort();
    assert.deepEqual(projects, [a.project.name, project].sort(), "the new project is theirs to see");
  });
});
