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
});
