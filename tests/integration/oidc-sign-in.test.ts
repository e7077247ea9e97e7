// OpenID Connect sign-in (gateway/people/oidc.ts, openid-client) against a real OpenID provider
// (oidc-provider in a process of its own, tests/helpers/oidc-op.ts), over real HTTP, with the login
// form filled in by a headless Chromium: the code flow with PKCE yields the person and their groups;
// a callback whose state, nonce or verifier is not this sign-in's, and a code used twice, are
// refused; the device flow signs in once the person approves the code in a browser.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { OidcProvider, oidcProviderSettings, type PendingSignIn } from "../../gateway/people/oidc.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { startOidcOp, type OidcOp } from "../helpers/oidc-op.ts";

const alice = { sub: "sub-alice", username: "alice", password: "wonder-land-1", email: "alice@example.com", name: "Alice Liddell", groups: ["engineering", "ml-platform"] };

describe("sign-in through an OpenID provider", () => {
  let op: OidcOp;
  let browser: Browser;
  let callback: http.Server;
  let redirectUri: string;
  let rp: OidcProvider;
  let device: OidcProvider;
  /** The next URL the provider sends the browser back with. */
  let returned: (url: URL) => void = () => undefined;

  before(async () => {
    callback = http.createServer((req, res) => {
      returned(new URL(req.url!, redirectUri));
      res.end("signed in");
    });
    await new Promise<void>((r) => callback.listen(0, "127.0.0.1", r));
    redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/auth/oidc/company/callback`;
    op = await startOidcOp([alice], [
      { client_id: "llmgw", client_secret: "rp-secret", redirect_uris: [redirectUri] },
      { client_id: "llmgw-ctl", redirect_uris: ["http://127.0.0.1/unused"], public: true },
    ]);
    const settings = { name: "company", issuer: op.issuer, clientId: "llmgw", scopes: ["openid", "email", "profile", "groups"], allowInsecure: true };
    rp = await OidcProvider.discover(oidcProviderSettings.parse(settings), "rp-secret");
    device = await OidcProvider.discover(oidcProviderSettings.parse({ ...settings, clientId: "llmgw-ctl" }));
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await op?.stop();
    callback?.close();
  });

  /** The browser goes to `url`, signs in as alice, and comes back: the callback URL it came back with. */
  const signIn = async (url: string): Promise<URL> => {
    const back = new Promise<URL>((resolve) => (returned = resolve));
    const page = await browser.newPage();
    try {
      await page.goto(url);
      await page.fill("input[name=username]", alice.username);
      await page.fill("input[name=password]", alice.password);
      await page.click("button");
      return await back;
    } finally {
      await page.close();
    }
  };

  it("signs a person in with the code flow and PKCE, with their groups", async () => {
    const { url, pending } = await rp.start(redirectUri);
    assert.match(url, /code_challenge_method=S256/);
    const back = await signIn(url);
    assert.deepEqual(await rp.finish(back, pending), { provider: "company", subject: "sub-alice", email: "alice@example.com", name: "Alice Liddell", groups: ["engineering", "ml-platform"] });
  });

  it("refuses a callback that is not this sign-in's: its state, nonce or verifier, or a code used twice", async () => {
    const cases: [string, (p: PendingSignIn) => PendingSignIn][] = [
      ["another state", (p) => ({ ...p, state: "forged" })],
      ["another nonce", (p) => ({ ...p, nonce: "forged" })],
      ["another verifier", (p) => ({ ...p, codeVerifier: "x".repeat(43) })],
    ];
    for (const [what, change] of cases) {
      const { url, pending } = await rp.start(redirectUri);
      const back = await signIn(url);
      await assert.rejects(rp.finish(back, change(pending)), what);
      // The untouched sign-in still works once… unless the code was spent by the refused try.
      if (what === "another state") await rp.finish(back, pending);
    }
    const { url, pending } = await rp.start(redirectUri);
    const back = await signIn(url);
    await rp.finish(back, pending);
    await assert.rejects(rp.finish(back, pending), "a code used twice");
  });

  it("signs in with the device flow once the person approves the code", async () => {
    const started = await device.startDevice();
    assert.ok(started.user_code && started.verification_uri_complete);
    const page = await browser.newPage();
    try {
      await page.goto(started.verification_uri_complete!);
      // oidc-provider's own page asks to confirm the code, then its login form.
      await page.click("button[type=submit], button");
      await page.fill("input[name=username]", alice.username);
      await page.fill("input[name=password]", alice.password);
      await page.click("button");
      const who = await device.finishDevice(started, AbortSignal.timeout(30_000));
      assert.equal(who.subject, "sub-alice");
      assert.deepEqual(who.groups, ["engineering", "ml-platform"]);
    } finally {
      await page.close();
    }
  });
});
