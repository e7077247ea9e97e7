// Signing in to the console through a real identity provider (oidc-provider, tests/helpers/oidc-op.ts)
// in Debian's Chromium, as a person would: a visitor's page is the sign-in page; its provider link
// leads to the provider's login form; back on the console, the person's name is in the header and
// the menu is what their group's role (by a group mapping) opens; signing out leads back to the
// sign-in page. axe-core checks each page; screenshots go to tests/artifacts/.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { launchBrowser } from "../helpers/browser.ts";
import { openTab, screenshot, seriousViolations, type ConsoleTab } from "../helpers/console-browser.ts";
import { startOidcOp, type OidcOp } from "../helpers/oidc-op.ts";
import { freePort, startPlatform, type Platform } from "../helpers/platform.ts";
import { secretFile } from "../helpers/sign-in-gateway.ts";

const alice = { sub: "sub-alice-console", username: "alice", password: "wonder-land-1", email: "alice.console@example.com", name: "Alice Console", groups: ["ml-platform"] };

describe("web console: sign-in through an OpenID provider", () => {
  let op: OidcOp;
  let p: Platform;
  let browser: Browser;
  let t: ConsoleTab;
  /** The gateway's client port, chosen here (the platform's clientUrl names the one it would have taken). */
  let base: string;

  before(async () => {
    // The gateway's port is chosen first: the provider must know its redirect URI.
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    op = await startOidcOp([alice], [{ client_id: "llmgw-console", client_secret: "console-secret", redirect_uris: [`http://127.0.0.1:${port}/auth/oidc/company/callback`] }]);
    const settings = {
      oidc: [
        {
          name: "company",
          label: "Company account",
          issuer: op.issuer,
          clientId: "llmgw-console",
          clientSecretFile: secretFile("console-oidc", "console-secret"),
          scopes: ["openid", "email", "profile", "groups"],
          allowInsecure: true,
        },
      ],
    };
    // JSON is YAML: the settings file as the gateway reads it.
    p = await startPlatform({ processes: ["gateway"], env: { LLMGW_CLIENT_PORT: String(port), LLMGW_SIGN_IN_FILE: secretFile("sign-in.yaml", JSON.stringify(settings)) } });
    await p.admin("POST", "/group-mappings", { provider: "company", group: "ml-platform", scope: "platform", role: "viewer" });
    browser = await launchBrowser();
    // A visitor's /api/v1/me is a 401, which the page means to cause; the provider's pages ask for a 404 of their own.
    t = await openTab(browser, base, null, [401, 404]);
  });

  after(async () => {
    await t?.close().catch(() => undefined);
    await browser?.close();
    await p?.stop();
    await op?.stop();
  });

  it("signs in at the provider, comes back to the page asked for with the group's role, and signs out", async () => {
    await t.page.goto(`${base}/console/usage`);
    await t.page.getByRole("heading", { level: 1, name: "Sign in" }).waitFor();
    await screenshot(t.page, "sign-in-provider");
    assert.deepEqual(await seriousViolations(t.page), []);

    await t.page.getByRole("link", { name: /Company account/ }).click();
    await t.page.locator("input[name=username]").waitFor();
    await t.page.fill("input[name=username]", alice.username);
    await t.page.fill("input[name=password]", alice.password);
    await Promise.all([t.page.waitForURL(`${base}/console/usage`), t.page.click("button")]);

    await t.page.getByRole("heading", { level: 1, name: "Usage" }).waitFor();
    await t.page.getByText(alice.name, { exact: true }).waitFor();
    const nav = t.page.getByRole("navigation");
    await nav.getByRole("link", { name: "Usage" }).waitFor();
    for (const hidden of ["Nodes", "Tenancy", "Audit"]) assert.equal(await nav.getByRole("link", { name: hidden }).count(), 0, `${hidden} is not a viewer's`);
    await screenshot(t.page, "signed-in-usage");
    assert.deepEqual(await seriousViolations(t.page), []);
    assert.deepEqual(t.errors, []);

    await t.page.getByRole("button", { name: "Sign out" }).click();
    await t.page.getByRole("heading", { level: 1, name: "Sign in" }).waitFor();
    const me = await t.page.evaluate(async () => (await fetch("/api/v1/me")).status);
    assert.equal(me, 401, "the session is gone");
  });
});
