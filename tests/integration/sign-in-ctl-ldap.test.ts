// `llmgw ctl login` with the device flow run by the gateway (the client secret never leaves it),
// against a real OpenID provider with Chromium approving the code, the session kept in ctl's
// settings file (mode 0600) and ended by `ctl logout`; and LDAP sign-in on POST /auth/ldap against
// a real OpenLDAP (Debian's slapd) with the directory's groups made into memberships.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { LLMGW_BIN } from "../../common/children.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { LDAP_BASE, LDAP_SERVICE_DN, startSlapd, type Slapd } from "../helpers/ldap.ts";
import { startOidcOp, type OidcOp } from "../helpers/oidc-op.ts";
import { freePort } from "../helpers/platform.ts";
import { secretFile, setCookie, startSignInGateway, type SignInGateway } from "../helpers/sign-in-gateway.ts";

const erin = { sub: "sub-erin", username: "erin", password: "device-5", email: "erin@example.com", name: "Erin Device", groups: ["ml-platform"] };

/** Runs `llmgw ctl …` with `env`; `onStderr` sees what it prints as it prints it. */
function ctl(args: string[], env: NodeJS.ProcessEnv, onStderr: (text: string) => void = () => undefined): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [LLMGW_BIN, "ctl", ...args], { env: { ...process.env, LLMGW_FROM_SOURCE: "1", ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      onStderr(stderr);
    });
    child.on("exit", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

describe("ctl login (device flow) and LDAP sign-in", () => {
  let op: OidcOp;
  let slapd: Slapd;
  let gw: SignInGateway;
  let browser: Browser;
  const settingsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-ctl-")), "ctl.json");
  const ctlEnv = { LLMGW_CTL_FILE: settingsFile, LLMGW_ADMIN_TOKEN: "", LLMGW_SESSION: "" };

  before(async () => {
    const port = await freePort();
    op = await startOidcOp([erin], [{ client_id: "llmgw", client_secret: "device-secret", redirect_uris: [`http://127.0.0.1:${port}/auth/oidc/company/callback`], device: true }]);
    slapd = await startSlapd([{ uid: "alice", name: "Alice Liddell", mail: "alice.ldap@example.com", password: "wonder-land-1" }], { engineering: ["alice"] });
    gw = await startSignInGateway(port, {
      oidc: [{ name: "company", issuer: op.issuer, clientId: "llmgw", clientSecretFile: secretFile("secret", "device-secret"), scopes: ["openid", "email", "profile", "groups"], allowInsecure: true }],
      ldap: { url: slapd.url, bindDn: LDAP_SERVICE_DN, bindPasswordFile: secretFile("bind", slapd.servicePassword), userBase: `ou=people,${LDAP_BASE}`, groupBase: `ou=groups,${LDAP_BASE}` },
    });
    await gw.db.groupMapping.deleteMany({});
    await gw.db.groupMapping.createMany({
      data: [
        { id: randomUUID(), provider: "ldap", group: "engineering", scope: "platform", scopeId: null, role: "operator" },
        { id: randomUUID(), provider: "company", group: "ml-platform", scope: "platform", scopeId: null, role: "viewer" },
      ],
    });
    await gw.db.person.deleteMany({ where: { email: { in: [erin.email, "alice.ldap@example.com"] } } });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await gw?.close();
    await op?.stop();
    await slapd?.stop();
  });

  it("signs in with ctl login: the person approves the code in a browser, ctl keeps the session (0600)", async () => {
    let approve!: (url: string) => void;
    const shown = new Promise<string>((r) => (approve = r));
    const run = ctl(["login", "--url", gw.url, "--provider", "company", "--json"], ctlEnv, (err) => {
      const m = /or open (\S+)/.exec(err);
      if (m) approve(m[1]!);
    });
    const page = await browser.newPage();
    try {
      await page.goto(await shown);
      // oidc-provider's own page asks to confirm the code, then its login form.
      await page.click("button[type=submit], button");
      await page.fill("input[name=username]", erin.username);
      await page.fill("input[name=password]", erin.password);
      await page.click("button");
    } finally {
      await page.close();
    }
    const r = await run;
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { person: { id: string }; provider: string; settings_file: string };
    assert.equal(out.provider, "company");
    assert.equal(out.settings_file, settingsFile);
    assert.equal(fs.statSync(settingsFile).mode & 0o777, 0o600);
    const saved = JSON.parse(fs.readFileSync(settingsFile, "utf8")) as { url: string; session: string };
    assert.equal(saved.url, gw.url);
    assert.match(saved.session, /^llmgw-sess-/);
    assert.ok(!r.stdout.includes(saved.session) && !r.stderr.includes(saved.session), "ctl never prints the token");
    const s = await gw.sessions.get(saved.session);
    assert.equal(s?.personId, out.person.id);
    assert.equal(s?.via, "oidc:company");
    const m = await gw.db.membership.findMany({ where: { personId: out.person.id } });
    assert.deepEqual(m.map((x) => `${x.source} ${x.scope} ${x.role}`), ["company platform viewer"]);
    assert.ok(!gw.logs().includes(saved.session), "the token is not in the gateway's log");

    const bye = await ctl(["logout"], ctlEnv);
    assert.equal(bye.code, 0, bye.stderr);
    assert.equal(await gw.sessions.get(saved.session), null, "the gateway ended the session");
    assert.equal((JSON.parse(fs.readFileSync(settingsFile, "utf8")) as { session?: string }).session, undefined);
    const again = await ctl(["logout"], ctlEnv);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /not signed in/);
  });

  it("takes a device sign-in's token once only", async () => {
    const start = await fetch(`${gw.url}/auth/device/start`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    assert.equal(start.status, 200, "one provider: it need not be named");
    const s = (await start.json()) as { handle: string; verification_uri_complete: string };
    const poll = () => fetch(`${gw.url}/auth/device/poll`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ handle: s.handle }) });
    assert.equal((await poll()).status, 202, "pending until approved");
    const page = await browser.newPage();
    await page.goto(s.verification_uri_complete);
    await page.click("button[type=submit], button");
    await page.fill("input[name=username]", erin.username);
    await page.fill("input[name=password]", erin.password);
    await page.click("button");
    await page.close();
    let r = await poll();
    // The gateway polls the provider at the interval the provider asks; wait for its outcome.
    for (let i = 0; r.status === 202 && i < 60; i++) {
      await new Promise((res) => setTimeout(res, 500));
      r = await poll();
    }
    assert.equal(r.status, 200);
    assert.match(((await r.json()) as { token: string }).token, /^llmgw-sess-/);
    const second = await poll();
    assert.equal(second.status, 400);
    assert.equal(((await second.json()) as { error: { code: string } }).error.code, "unknown_device_sign_in");
  });

  it("signs a person in with their directory password, their LDAP groups made memberships", async () => {
    const r = await fetch(`${gw.url}/auth/ldap`, { method: "POST", headers: { "content-type": "application/json", origin: gw.url }, body: JSON.stringify({ username: "alice", password: "wonder-land-1", return: "/console/usage" }) });
    assert.equal(r.status, 200);
    const body = (await r.json()) as { person: { id: string }; csrf: string; return: string };
    assert.equal(body.return, "/console/usage");
    const token = setCookie(r, "llmgw_session")!;
    assert.equal(setCookie(r, "llmgw_csrf"), body.csrf);
    const s = await gw.sessions.get(token);
    assert.equal(s?.via, "ldap");
    const p = await gw.db.person.findUniqueOrThrow({ where: { id: body.person.id }, include: { identities: true, memberships: true } });
    assert.equal(p.email, "alice.ldap@example.com");
    assert.deepEqual(p.identities.map((i) => [i.provider, i.subject]), [["ldap", `uid=alice,ou=people,${LDAP_BASE}`]]);
    assert.deepEqual(p.memberships.map((m) => `${m.source} ${m.scope} ${m.role}`), ["ldap platform operator"]);

    // A browser's form post goes on to where it was asked to.
    const form = await fetch(`${gw.url}/auth/ldap`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ username: "alice", password: "wonder-land-1", return: "/console/" }).toString() });
    assert.equal(form.status, 303);
    assert.equal(form.headers.get("location"), "/console/");
    assert.equal(await gw.db.person.count({ where: { email: "alice.ldap@example.com" } }), 1, "the same person the second time");
    assert.ok(!gw.logs().includes("wonder-land-1") && !gw.logs().includes(token));
  });

  it("refuses a disabled person at LDAP too", async () => {
    await gw.db.person.update({ where: { email: "alice.ldap@example.com" }, data: { disabled: true } });
    const r = await fetch(`${gw.url}/auth/ldap`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "alice", password: "wonder-land-1" }) });
    assert.equal(r.status, 403);
    assert.equal(((await r.json()) as { error: { code: string } }).error.code, "person_disabled");
    assert.equal(setCookie(r, "llmgw_session"), undefined);
  });
});
