// The console's checks before sending (console/src/validate.ts), held to the admin API's own schemas
// they copy, and which pages each role opens (console/src/roles.ts) against the admin API's role table.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { canaryBody, scaleBody, serveBody, upgradeBody } from "../../gateway/admin-api/models.ts";
import { adminOperations } from "../../gateway/admin-api/openapi.ts";
import { allowed, operationKey, ROUTE_ROLES } from "../../gateway/admin-api/roles.ts";
import { can, type Capability, type Me, type Role } from "../../console/src/roles.ts";
import { durationOf, replicasOf, versionOf, waveOf, weightOf } from "../../console/src/validate.ts";
import { gpuText } from "../../console/src/parts/fleet.ts";

describe("console checks agree with the admin API's", () => {
  it("replicas: what the form takes is what serve and scale take", () => {
    for (const text of ["0", "1", "2", "1000", "1001", "-1", "1.5", "", " 3 ", "abc", "1e3"]) {
      const n = replicasOf(text);
      const api = scaleBody.safeParse({ replicas: Number(text.trim()) }).success && /^\d+$/.test(text.trim());
      assert.equal(n !== null, api, `replicas ${JSON.stringify(text)}`);
      if (n !== null) assert.equal(serveBody.safeParse({ replicas: n }).success, true);
    }
  });

  it("version, wave, weight and duration: refused by the form exactly when the API refuses them", () => {
    for (const v of ["v1", "2.0-rc_1", "a".repeat(64), "a".repeat(65), "v 1", "v/1"]) {
      assert.equal(versionOf(v) !== null, upgradeBody.safeParse({ version: v }).success, `version ${v}`);
    }
    for (const w of ["1", "1000", "0", "1001", "2.5"]) assert.equal(waveOf(w) !== null, upgradeBody.safeParse({ version: "v1", wave: Number(w) }).success, `wave ${w}`);
    for (const w of ["10", "0.5", "99.9", "0", "100", "-3", "x"]) {
      assert.equal(weightOf(w) !== null, canaryBody.safeParse({ version: "v1", weight: Number(w), for: "5m" }).success, `weight ${w}`);
    }
    // The form also refuses a zero duration ("0s"), which the API's string form lets through to the workflow.
    for (const d of ["90s", "5m", "1h", "500ms", "5", "5d", "m", "0s"]) {
      assert.equal(durationOf(d) !== null, canaryBody.safeParse({ version: "v1", weight: 10, for: d }).success && !/^0+\D/.test(d), `duration ${d}`);
    }
  });
});

describe("what the console shows each role", () => {
  const me = (role: Role): Me => ({ person: { id: "p", name: "P", email: null }, memberships: [], roles: [role] });
  /** The admin route behind each capability: a role sees it exactly when the API lets it call that route. */
  const ROUTE: Record<Capability, string> = {
    "models.read": "GET /api/v1/models",
    "nodes.read": "GET /api/v1/nodes",
    "fleet.write": "POST /api/v1/models/:name/serve",
    "notifications.read": "GET /api/v1/notifications",
    "usage.read": "GET /api/v1/usage",
    "tenancy.read": "GET /api/v1/projects",
    "tenancy.write": "POST /api/v1/keys",
    "limits.write": "PUT /api/v1/limits/:scope/:name",
    "people.write": "POST /api/v1/people/:id/memberships",
    admin: "POST /api/v1/guard/policies",
  };
  const documented = new Set(adminOperations.map((o) => operationKey(o.method, o.path)));
  for (const role of ["platform-admin", "operator", "org-admin", "member", "viewer"] as Role[]) {
    it(role, () => {
      for (const [cap, route] of Object.entries(ROUTE) as [Capability, string][]) {
        // A route left out of the role table is platform-admin's; it must still be a route.
        assert.ok(ROUTE_ROLES.has(route) || documented.has(route), `${route} is an admin route`);
        assert.equal(can(me(role), cap), allowed(route, new Set([role]), true), `${role} ${cap} (${route})`);
      }
    });
  }
  it("nobody signed in sees nothing", () => assert.equal(can(null, "models.read"), false));
});

describe("the Nodes page's GPU text", () => {
  it("shows memory, utilisation and the PCIe link, and the link's best when it runs below it", () => {
    const g = { index: 0, name: "NVIDIA L4", memoryTotalMib: 24576, memoryUsedMib: 1024, utilizationPct: 35, pcieGenCurrent: 4, pcieGenMax: 4, pcieWidthCurrent: 16, pcieWidthMax: 16 };
    assert.equal(gpuText(g, "memory"), "NVIDIA L4 #0: memory 1/24 GiB, 35%, PCIe Gen4 x16");
    assert.equal(gpuText({ ...g, pcieGenCurrent: 3, pcieWidthCurrent: 8 }, "memory"), "NVIDIA L4 #0: memory 1/24 GiB, 35%, PCIe Gen3 x8 of Gen4 x16");
    assert.equal(gpuText({ name: "A100", memoryTotalMib: 81920 }, "bellek"), "A100: bellek 0/80 GiB", "no link reported, none shown");
  });
});
