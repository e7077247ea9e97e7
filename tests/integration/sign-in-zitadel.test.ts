// Sign-in with the code flow and PKCE against a real OpenID provider written by others: zitadel's
// example provider (Go modules, pinned; scripts/zitadel-op.sh builds it), through a real gateway
// process reading LLMGW_SIGN_IN_FILE, with Debian's Chromium filling in the provider's login form.
// The provider keeps email and name out of the ID token (they come from its UserInfo endpoint).
// The person is made with the provider's subject, and the session's /api/v1/me names them; a
// replayed callback and a wrong client secret are refused and make no one.
import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { closePrisma, prisma, type PrismaClient } from "../../common/db.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { freePort, startPlatform, type Platform } from "../helpers/platform.ts";
import { secretFile } from "../helpers/sign-in-gateway.ts";
import { startZitadelOp, ZITADEL_INSTALL, zitadelOpBinary, type ZitadelOp, type ZitadelUser } from "../helpers/zitadel-op.ts";

const binary = zitadelOpBinary();
const missing = `needs zitadel's example OpenID provider: ${ZITADEL_INSTALL}`;
// CI installs it (.ci/run): there a missing provider is a failure, not a skip.
if (!binary && process.env.CI) throw new Error(`the zitadel sign-in test ${missing}`);

const grace: ZitadelUser = {
  ID: `zid-grace-${process.pid}`,
  Username: "grace",
  Password: "compile-it-7",
  FirstName: "Grace",
  LastName: "Hopper",
  Email: `grace-${process.pid}@navy.example`,
  EmailVerified: true,
  PreferredLanguage: "en",
};

describe("sign-in with zitadel's example OpenID provider", { skip: binary ? false : missing }, () => {
  let op: ZitadelOp;
  let p: Platform;
  let db: PrismaClient;
  let browser: Browser;
  let base: string;

  before(async () => {
    // The gateway's port is chosen first: the provider must know its redirect URIs.
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    op = await startZitadelOp(binary!, [grace], [`${base}/auth/oidc/zitadel/callback`, `${base}/auth/oidc/zitadel-wrong/callback`]);
    // Its confidential client is "web", secret "secret" (client_secret_basic).
    const entry = (name: string, secret: string) => ({ name, issuer: op.issuer, clientId: "web", clientSecretFile: secretFile(name, secret), scopes: ["openid", "email", "profile"], allowInsecure: true });
    const settings = { oidc: [entry("zitadel", "secret"), entry("zitadel-wrong", "not-the-secret")] };
    p = await startPlatform({ processes: ["gateway"], env: { LLMGW_CLIENT_PORT: String(port), LLMGW_SIGN_IN_FILE: secretFile("sign-in.yaml", JSON.stringify(settings)) } });
    db = prisma(p.env.DATABASE_URL);
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await closePrisma();
    await p?.stop();
    await op?.stop();
  });

  /** Starts a sign-in through `provider` in a fresh browser and logs in at zitadel's form; resolves with the gateway's answer to the callback. */
  async function signIn(provider: string, returnTo: string) {
    const context = await browser.newContext();
    const page = await context.newPage();
    const callbackPrefix = `${base}/auth/oidc/${provider}/callback`;
    await page.goto(`${base}/auth/oidc/${provider}/start?return=${encodeURIComponent(returnTo)}`);
    assert.ok(page.url().startsWith(`${op.issuer}login/username`), `at zitadel's login form: ${page.url()}`);
    await page.fill("input[name=username]", grace.Username);
    await page.fill("input[name=password]", grace.Password);
    const [callback] = await Promise.all([page.waitForResponse((r) => r.url().startsWith(callbackPrefix)), page.click("button[type=submit]")]);
    await page.waitForLoadState();
    return { context, page, callback };
  }

  it("signs a person in end to end: the session's /api/v1/me names them, the store holds zitadel's subject", async () => {
    const { context, page, callback } = await signIn("zitadel", "/api/v1/me");
    try {
      assert.equal(callback.status(), 303);
      assert.equal(new URL(page.url()).pathname, "/api/v1/me", "back where the sign-in was asked to return");
      const shown = JSON.parse((await page.locator("body").innerText()).trim()) as { person: { id: string; email: string; name: string } };
      assert.equal(shown.person.email, grace.Email);
      assert.equal(shown.person.name, "Grace Hopper");

      const session = (await context.cookies(base)).find((c) => c.name === "llmgw_session")!;
      assert.ok(session, "the session cookie is set");
      const me = await fetch(`${base}/api/v1/me`, { headers: { cookie: `llmgw_session=${session.value}` } });
      assert.equal(me.status, 200);
      assert.equal(((await me.json()) as { person: { id: string } }).person.id, shown.person.id);

      const person = await db.person.findUniqueOrThrow({ where: { email: grace.Email }, include: { identities: true } });
      assert.equal(person.id, shown.person.id);
      assert.equal(person.name, "Grace Hopper");
      assert.deepEqual(person.identities.map((i) => [i.provider, i.subject]), [["zitadel", grace.ID]]);

      // The same callback again (its code and state spent) makes nothing.
      const replay = await fetch(callback.url(), { redirect: "manual" });
      assert.equal(replay.status, 400);
      assert.equal(((await replay.json()) as { error: { code: string } }).error.code, "unknown_sign_in");

      const log = fs.readFileSync(p.children.get("gateway")!.logFile, "utf8");
      assert.match(log, /"msg":"signed in"/);
      assert.ok(!log.includes(session.value) && !log.includes(grace.Password) && !log.includes(new URL(callback.url()).searchParams.get("code")!), "no session, password or code in the gateway's log");
    } finally {
      await context.close();
    }
  });

  it("refuses the provider's answer when the gateway's client secret is wrong, and makes no one", async () => {
    const before = await db.personIdentity.count({ where: { provider: "zitadel-wrong" } });
    const { context, callback } = await signIn("zitadel-wrong", "/console/");
    try {
      assert.equal(callback.status(), 401);
      const e = ((await callback.json()) as { error: { code: string; message: string } }).error;
      assert.equal(e.code, "provider_answer_refused");
      assert.ok(!e.message.includes("not-the-secret"), "the secret is not in the answer");
      assert.ok(!(await context.cookies(base)).some((c) => c.name === "llmgw_session"), "no session");
      assert.equal(await db.personIdentity.count({ where: { provider: "zitadel-wrong" } }), before);
    } finally {
      await context.close();
    }
  });
});
