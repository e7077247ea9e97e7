// `llmgw ctl login --browser` (RFC 8252's loopback redirect) against a real OpenID provider: ctl
// listens on 127.0.0.1, prints the gateway's start URL, Chromium signs in at the provider, the
// gateway sends it back to ctl's loopback with a single-use code, and ctl trades the code and its
// verifier for the session, kept in its settings file (0600). A code is spent once, a wrong verifier
// is refused (and spends it), and a start whose loopback is not one is a 400.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { LLMGW_BIN } from "../../common/children.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { startOidcOp, type OidcOp } from "../helpers/oidc-op.ts";
import { freePort } from "../helpers/platform.ts";
import { authorize, secretFile, sendCallback, startSignInGateway, type SignInGateway } from "../helpers/sign-in-gateway.ts";

const hana = { sub: "sub-hana", username: "hana", password: "loopback-8", email: "hana.loopback@example.com", name: "Hana Loopback", groups: ["ml-platform"] };

function ctl(args: string[], env: NodeJS.ProcessEnv, onStderr: (text: string) => void): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [LLMGW_BIN, "ctl", ...args], { env: { ...process.env, LLMGW_FROM_SOURCE: "1", ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => onStderr((stderr += d.toString())));
    child.on("exit", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

describe("ctl login --browser (loopback callback)", () => {
  let op: OidcOp;
  let gw: SignInGateway;
  let browser: Browser;
  const settingsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-ctl-")), "ctl.json");
  const ctlEnv = { LLMGW_CTL_FILE: settingsFile, LLMGW_ADMIN_TOKEN: "", LLMGW_SESSION: "" };

  before(async () => {
    const port = await freePort();
    op = await startOidcOp([hana], [{ client_id: "llmgw", client_secret: "loopback-secret", redirect_uris: [`http://127.0.0.1:${port}/auth/oidc/company/callback`] }]);
    gw = await startSignInGateway(port, {
      oidc: [{ name: "company", issuer: op.issuer, clientId: "llmgw", clientSecretFile: secretFile("secret", "loopback-secret"), scopes: ["openid", "email", "profile", "groups"], allowInsecure: true }],
    });
    await gw.db.groupMapping.deleteMany({});
    await gw.db.groupMapping.create({ data: { id: randomUUID(), provider: "company", group: "ml-platform", scope: "platform", scopeId: null, role: "viewer" } });
    await gw.db.person.deleteMany({ where: { email: hana.email } });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    await op?.stop();
  });

  const exchange = (body: unknown) => fetch(`${gw.url}/auth/cli/exchange`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

  it("signs in in the browser and comes back to ctl on loopback; ctl keeps the session (0600)", async () => {
    let shown!: (url: string) => void;
    const url = new Promise<string>((r) => (shown = r));
    const run = ctl(["login", "--browser", "--no-open", "--url", gw.url, "--json"], ctlEnv, (err) => {
      const m = /To sign in, open (\S+)/.exec(err);
      if (m) shown(m[1]!);
    });
    const start = new URL(await url);
    assert.equal(start.origin + start.pathname, `${gw.url}/auth/oidc/company/start`, "the only OpenID provider, as none was named");
    const page = await browser.newPage();
    let landed: URL;
    try {
      await page.goto(start.href);
      await page.fill("input[name=username]", hana.username);
      await page.fill("input[name=password]", hana.password);
      await Promise.all([page.waitForURL((u) => u.hostname === "127.0.0.1" && u.pathname === "/callback"), page.click("button")]);
      landed = new URL(page.url());
      assert.match(await page.textContent("h1") ?? "", /Signed in/);
    } finally {
      await page.close();
    }
    assert.equal(landed.port, start.searchParams.get("cli_port"), "back to ctl's own port");
    assert.equal(landed.searchParams.get("state"), start.searchParams.get("cli_state"));
    const r = await run;
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { person: { id: string }; provider: string };
    assert.equal(out.provider, "company");
    assert.equal(fs.statSync(settingsFile).mode & 0o777, 0o600);
    const saved = JSON.parse(fs.readFileSync(settingsFile, "utf8")) as { url: string; session: string };
    assert.match(saved.session, /^llmgw-sess-/);
    assert.ok(!landed.href.includes(saved.session), "the session never rides in a URL");
    const s = await gw.sessions.get(saved.session);
    assert.equal(s?.personId, out.person.id);
    assert.equal(s?.via, "oidc:company");
    const m = await gw.db.membership.findMany({ where: { personId: out.person.id } });
    assert.deepEqual(m.map((x) => `${x.scope} ${x.role}`), ["platform viewer"]);

    const replay = await exchange({ code: landed.searchParams.get("code"), verifier: "A".repeat(43) });
    assert.equal(replay.status, 400);
    assert.equal(((await replay.json()) as { error: { code: string } }).error.code, "unknown_code", "the code was spent by ctl");
    assert.ok(!gw.logs().includes(saved.session) && !gw.logs().includes(landed.searchParams.get("code")!), "no token or code in the log");
  });

  it("refuses a wrong verifier (spending the code) and a start whose loopback is not one", async () => {
    const verifier = randomBytes(48).toString("base64url");
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const q = new URLSearchParams({ cli_port: "45678", cli_state: "s".repeat(24), cli_challenge: challenge });
    const back = await sendCallback(await authorize(browser, gw, `/auth/oidc/company/start?${q}`, hana.username, hana.password));
    assert.equal(back.status, 303);
    const to = new URL(back.headers.get("location")!);
    assert.equal(`${to.origin}${to.pathname}`, "http://127.0.0.1:45678/callback", "only ever 127.0.0.1");
    assert.equal(back.headers.getSetCookie().some((c) => c.startsWith("llmgw_session=") && !c.startsWith("llmgw_session=;")), false, "no session cookie: ctl gets the session");
    const code = to.searchParams.get("code")!;
    const wrong = await exchange({ code, verifier: randomBytes(48).toString("base64url") });
    assert.equal(wrong.status, 400);
    assert.equal(((await wrong.json()) as { error: { code: string } }).error.code, "verifier_mismatch");
    const late = await exchange({ code, verifier });
    assert.equal(((await late.json()) as { error: { code: string } }).error.code, "unknown_code", "a wrong verifier spent it");

    for (const [query, param] of [
      [{ cli_port: "80", cli_state: "s".repeat(24), cli_challenge: challenge }, "cli_port"],
      [{ cli_port: "45678", cli_state: "short", cli_challenge: challenge }, "cli_state"],
      [{ cli_port: "45678", cli_state: "s".repeat(24) }, "cli_challenge"],
      [{ cli_port: "45678", cli_state: "s".repeat(24), cli_challenge: "not/base64url".padEnd(43, "=") }, "cli_challenge"],
    ] as const) {
      const r = await fetch(`${gw.url}/auth/oidc/company/start?${new URLSearchParams(query)}`, { redirect: "manual" });
      assert.equal(r.status, 400, JSON.stringify(query));
      const e = ((await r.json()) as { error: { code: string; param: string } }).error;
      assert.deepEqual([e.code, e.param], ["invalid_loopback", param]);
    }
    const bad = await exchange({ code: "x" });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { error: { param: string } }).error.param, "verifier");
  });
});
