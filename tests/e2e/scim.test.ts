// SCIM 2.0 on a real gateway: the PyPI compliance checker scim2-tester passes clean against it;
// a wrong or missing bearer is a 401 in SCIM's error shape; ETags and If-Match; and malformed
// requests, each answered in SCIM's error shape without changing anything.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startPlatform, type Platform } from "../helpers/platform.ts";
import { REPO } from "../helpers/settings.ts";

const ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";
const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
const PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

type Answer = { status: number; headers: Headers; body: Record<string, unknown> };

describe("SCIM 2.0", () => {
  let p: Platform;
  let token: string;

  const scim = async (method: string, p2: string, body?: unknown, headers: Record<string, string> = {}, bearer: string | null = token): Promise<Answer> => {
    const r = await fetch(`${p.clientUrl}/scim/v2${p2}`, {
      method,
      headers: { ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), ...(body !== undefined ? { "content-type": "application/scim+json" } : {}), ...headers },
      ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
    });
    const text = await r.text();
    return { status: r.status, headers: r.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  const isScimError = (a: Answer, status: number) => {
    assert.equal(a.status, status, JSON.stringify(a.body));
    assert.deepEqual(a.body.schemas, [ERROR_SCHEMA]);
    assert.equal(a.body.status, String(status));
    assert.equal(typeof a.body.detail, "string");
  };
  const newUser = async (userName: string, extra: Record<string, unknown> = {}) => {
    const a = await scim("POST", "/Users", { schemas: [USER_SCHEMA], userName, name: { givenName: "Ada", familyName: "Lovelace" }, emails: [{ value: `${userName}@example.com`, primary: true }], active: true, ...extra });
    assert.equal(a.status, 201, JSON.stringify(a.body));
    return a;
  };

  before(async () => {
    p = await startPlatform({ processes: ["gateway"] });
    const made = await p.ctl(["scim", "token", "create", "scim-tester", "--json"]);
    assert.equal(made.code, 0, made.stderr);
    token = (JSON.parse(made.stdout) as { token: string }).token;
    assert.match(token, /^llmgw-scim-/);
  });

  after(async () => {
    await p?.stop();
  });

  it("refuses a missing, wrong or revoked bearer with a 401 in SCIM's error shape", async () => {
    isScimError(await scim("GET", "/Users", undefined, {}, null), 401);
    isScimError(await scim("GET", "/Users", undefined, {}, "llmgw-scim-not-a-real-token"), 401);
    isScimError(await scim("GET", "/ServiceProviderConfig", undefined, {}, p.adminToken), 401);
    const other = JSON.parse((await p.ctl(["scim", "token", "create", "short-lived", "--json"])).stdout) as { token: string };
    assert.equal((await scim("GET", "/Users", undefined, {}, other.token)).status, 200);
    assert.equal((await p.ctl(["scim", "token", "revoke", "short-lived"])).code, 0);
    const after = await scim("GET", "/Users", undefined, {}, other.token);
    isScimError(after, 401);
    assert.match(after.headers.get("www-authenticate") ?? "", /^Bearer/);
    // Only the sha256 is kept: the listing never holds the token.
    const listed = await p.ctl(["scim", "token", "list", "--json"]);
    assert.ok(!listed.stdout.includes(token) && listed.stdout.includes("scim-tester"));
  });

  it("passes scim2-tester, the RFC 7643/7644 compliance checker, clean", async () => {
    const py = spawn(path.join(REPO, ".venv", "bin", "python"), [path.join(REPO, "tests", "scim", "check_server.py")], {
      env: { ...process.env, SCIM_URL: `${p.clientUrl}/scim/v2`, SCIM_TOKEN: token },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    py.stdout.on("data", (d: Buffer) => (out += d.toString()));
    py.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => py.on("close", resolve));
    assert.equal(code, 0, err);
    const results = out.trim().split("\n").map((l) => JSON.parse(l) as { status: string; title: string; resource: string | null; reason: string | null });
    const bad = results.filter((r) => !["SUCCESS", "COMPLIANT", "ACCEPTABLE", "SKIPPED"].includes(r.status));
    assert.deepEqual(bad, [], `scim2-tester found:\n${bad.map((r) => `${r.status} ${r.title} ${r.resource ?? ""}: ${r.reason}`).join("\n")}`);
    const passed = results.filter((r) => r.status === "SUCCESS");
    // Discovery, CRUD and PATCH of both Users and Groups ran, not only discovery.
    for (const resource of ["User", "Group"]) assert.ok(passed.filter((r) => r.resource === resource).length >= 10, `too few checks passed for ${resource}: ${JSON.stringify(results)}`);
  });

  it("versions every resource: ETag W/\"n\", If-None-Match 304, a stale If-Match 412", async () => {
    const made = await newUser("etag.person");
    const id = made.body.id as string;
    assert.equal(made.headers.get("etag"), 'W/"1"');
    assert.equal((made.body.meta as { version: string }).version, 'W/"1"');
    const got = await scim("GET", `/Users/${id}`);
    assert.equal(got.headers.get("etag"), 'W/"1"');
    assert.equal((await scim("GET", `/Users/${id}`, undefined, { "if-none-match": 'W/"1"' })).status, 304);
    const patch = { schemas: [PATCH_SCHEMA], Operations: [{ op: "replace", path: "displayName", value: "Ada L." }] };
    const patched = await scim("PATCH", `/Users/${id}`, patch, { "if-match": 'W/"1"' });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.headers.get("etag"), 'W/"2"');
    isScimError(await scim("PATCH", `/Users/${id}`, { ...patch, Operations: [{ op: "replace", path: "displayName", value: "stale" }] }, { "if-match": 'W/"1"' }), 412);
    assert.equal((await scim("GET", `/Users/${id}`)).body.displayName, "Ada L.");
    // Entra ID's capitalised ops and string booleans are understood.
    const entra = await scim("PATCH", `/Users/${id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: "Replace", path: "active", value: "False" }] });
    assert.equal(entra.body.active, false, JSON.stringify(entra.body));
  });

  it("answers malformed requests in SCIM's error shape and changes nothing", async () => {
    const target = await newUser("malformed.target");
    const id = target.body.id as string;
    const etag = target.headers.get("etag")!;
    const group = await scim("POST", "/Groups", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: "malformed-group", members: [{ value: id }] });
    assert.equal(group.status, 201, JSON.stringify(group.body));
    const gid = group.body.id as string;
    const snapshot = async () => {
      const audit = await p.admin<{ data: unknown[] }>("GET", "/audit?since=1h&limit=10000");
      return {
        user: (await scim("GET", `/Users/${id}`)).body,
        group: (await scim("GET", `/Groups/${gid}`)).body,
        users: (await scim("GET", "/Users?count=0")).body.totalResults,
        groups: (await scim("GET", "/Groups?count=0")).body.totalResults,
        audit: audit.data.length,
      };
    };
    const before = await snapshot();
    const cases: [string, () => Promise<Answer>, number, string | null][] = [
      ["filter with no value", () => scim("GET", `/Users?filter=${encodeURIComponent("userName eq")}`), 400, "invalidFilter"],
      ["filter unbalanced", () => scim("GET", `/Users?filter=${encodeURIComponent('(userName eq "a"')}`), 400, "invalidFilter"],
      ["filter on an unknown attribute", () => scim("GET", `/Users?filter=${encodeURIComponent('shoeSize eq "42"')}`), 400, "invalidFilter"],
      ["filter ending in an operator", () => scim("GET", `/Groups?filter=${encodeURIComponent('displayName eq "x" and')}`), 400, "invalidFilter"],
      ["count not a number", () => scim("GET", "/Users?count=lots"), 400, "invalidValue"],
      ["attributes naming an unknown attribute", () => scim("GET", `/Users/${id}?attributes=shoeSize`), 400, "invalidValue"],
      ["body not JSON", () => scim("POST", "/Users", "{not json"), 400, "invalidSyntax"],
      ["wrong schema", () => scim("POST", "/Users", { schemas: ["urn:example:params:scim:schemas:core:2.0:Widget"], userName: "widget" }), 400, "invalidSyntax"],
      ["no userName", () => scim("POST", "/Users", { schemas: [USER_SCHEMA], displayName: "Nobody" }), 400, "invalidValue"],
      ["userName taken (other case)", () => scim("POST", "/Users", { schemas: [USER_SCHEMA], userName: "MALFORMED.TARGET" }), 409, "uniqueness"],
      ["active not a boolean", () => scim("POST", "/Users", { schemas: [USER_SCHEMA], userName: "bad.active", active: "perhaps" }), 400, "invalidValue"],
      ["PATCH op unknown", () => scim("PATCH", `/Users/${id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: "frobnicate", path: "active", value: false }] }), 400, "invalidSyntax"],
      ["PATCH path unknown", () => scim("PATCH", `/Users/${id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: "replace", path: "shoeSize", value: 42 }] }), 400, "invalidPath"],
      ["PATCH without the PatchOp schema", () => scim("PATCH", `/Users/${id}`, { Operations: [{ op: "replace", path: "active", value: false }] }), 400, "invalidSyntax"],
      ["PATCH with a stale If-Match", () => scim("PATCH", `/Users/${id}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: "replace", path: "active", value: false }] }, { "if-match": 'W/"999"' }), 412, null],
      ["PUT with a malformed If-Match", () => scim("PUT", `/Users/${id}`, { schemas: [USER_SCHEMA], userName: "malformed.target", active: false }, { "if-match": "not-an-etag" }), 412, null],
      ["DELETE with a stale If-Match", () => scim("DELETE", `/Users/${id}`, undefined, { "if-match": 'W/"999"' }), 412, null],
      ["group member that is no User", () => scim("PATCH", `/Groups/${gid}`, { schemas: [PATCH_SCHEMA], Operations: [{ op: "add", path: "members", value: [{ value: "no-such-person" }] }] }), 400, "invalidValue"],
      ["group name taken", () => scim("POST", "/Groups", { schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"], displayName: "malformed-group" }), 409, "uniqueness"],
      ["search without the SearchRequest schema", () => scim("POST", "/Users/.search", { filter: 'userName eq "x"' }), 400, "invalidSyntax"],
      ["unknown User", () => scim("DELETE", "/Users/no-such-person"), 404, null],
      ["DELETE on the collection", () => scim("DELETE", "/Users"), 405, null],
      ["unknown endpoint", () => scim("GET", "/Widgets"), 404, null],
    ];
    for (const [what, send, status, scimType] of cases) {
      const a = await send();
      assert.equal(a.status, status, `${what}: ${JSON.stringify(a.body)}`);
      isScimError(a, status);
      assert.equal(a.body.scimType, scimType ?? undefined, `${what}: ${JSON.stringify(a.body)}`);
      assert.match(a.headers.get("content-type") ?? "", /^application\/scim\+json/, what);
    }
    assert.deepEqual(await snapshot(), before);
    // The current ETag still works: the refusals above left the version alone.
    assert.equal((await scim("DELETE", `/Users/${id}`, undefined, { "if-match": etag })).status, 204);
  });
});
