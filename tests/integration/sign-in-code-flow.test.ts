// Sign-in on the client port (/auth/*) with the code flow and PKCE, end to end over real HTTP:
// two real OpenID providers (oidc-provider, tests/helpers/oidc-op.ts) configured at once, a
// headless Chromium filling in their login forms, the real store and Redis. A person is made at
// first sign-in and found again; their groups become memberships by the mapping rules; the session
// cookie works; a replayed, forged or other browser's callback is refused, as is an ID token with
// the wrong audience or issuer (signed by the provider's own key all the same) and a disabled
// person; and nothing secret reaches the gateway's log.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { launchBrowser } from "../helpers/browser.ts";
import { startOidcOp, type OidcOp } from "../helpers/oidc-op.ts";
import { freePort } from "../helpers/platform.ts";
import { authorize, secretFile, sendCallback, setCookie, startSignInGateway, type SignInGateway } from "../helpers/sign-in-gateway.ts";

const alice = { sub: "sub-alice", username: "alice", password: "wonder-land-1", email: "Alice@Example.com", name: "Alice Liddell", groups: ["engineering", "ml-platform"] };
const dave = { sub: "sub-dave", username: "dave", password: "gone-fishing-4", email: "dave@example.com", name: "Dave Left", groups: ["engineering"] };
const carol = { sub: "sub-carol", username: "carol", password: "partner-3", email: "carol@partner.example", name: "Carol Partner", groups: ["partners"] };
const SCOPES = ["openid", "email", "profile", "groups"];

describe("sign-in on the client port with OpenID providers", () => {
  let company: OidcOp;
  let partner: OidcOp;
  let gw: SignInGateway;
  let browser: Browser;
  const orgId = randomUUID();
  /** Every session token and code seen, to look for in the log. */
  const secrets: string[] = [];

  before(async () => {
    const port = await freePort();
    const cb = (name: string) => [`http://127.0.0.1:${port}/auth/oidc/${name}/callback`];
    company = await startOidcOp([alice, dave], [
      { client_id: "llmgw", client_secret: "company-secret", redirect_uris: cb("company") },
      { client_id: "llmgw-aud", client_secret: "company-secret", redirect_uris: cb("wrong-aud"), forgeIdToken: { aud: "someone-else" } },
      { client_id: "llmgw-iss", client_secret: "company-secret", redirect_uris: cb("wrong-iss"), forgeIdToken: { iss: "http://127.0.0.1:1" } },
    ]);
    partner = await startOidcOp([carol], [{ client_id: "llmgw", client_secret: "partner-secret", redirect_uris: cb("partner") }]);
    const companySecret = secretFile("company", "company-secret\n");
    const entry = (name: string, issuer: string, clientId: string, file: string) => ({ name, issuer, clientId, clientSecretFile: file, scopes: SCOPES, allowInsecure: true });
    gw = await startSignInGateway(port, {
      oidc: [
        { ...entry("company", company.issuer, "llmgw", companySecret), label: "Company account" },
        entry("partner", partner.issuer, "llmgw", secretFile("partner", "partner-secret")),
        entry("wrong-aud", company.issuer, "llmgw-aud", companySecret),
        entry("wrong-iss", company.issuer, "llmgw-iss", companySecret),
      ],
    });
    // The rules: engineering at the company → org-admin of an org; ml-platform from anywhere → platform viewer.
    await gw.db.groupMapping.deleteMany({});
    await gw.db.groupMapping.createMany({
      data: [
        { id: randomUUID(), provider: "company", group: "engineering", scope: "org", scopeId: orgId, role: "org-admin" },
        { id: randomUUID(), provider: null, group: "ml-platform", scope: "platform", scopeId: null, role: "viewer" },
        { id: randomUUID(), provider: "partner", group: "partners", scope: "platform", scopeId: null, role: "viewer" },
      ],
    });
    for (const email of [alice.email, dave.email, carol.email]) await gw.db.person.deleteMany({ where: { email: email.toLowerCase() } });
    await gw.db.person.create({ data: { id: randomUUID(), name: dave.name, email: dave.email, disabled: true } });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await gw?.close();
    await company?.stop();
    await partner?.stop();
  });

  it("lists the providers", async () => {
    const r = await fetch(`${gw.url}/auth/providers`);
    assert.equal(r.status, 200);
    const { providers } = (await r.json()) as { providers: { name: string; kind: string; label: string; start: string }[] };
    assert.deepEqual(providers.map((p) => [p.name, p.kind, p.label]), [["company", "oidc", "Company account"], ["partner", "oidc", "partner"], ["wrong-aud", "oidc", "wrong-aud"], ["wrong-iss", "oidc", "wrong-iss"]]);
    assert.equal(providers[0]!.start, "/auth/oidc/company/start");
  });

  it("signs a person in in a browser, end to end to a session cookie, with their groups as memberships", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${gw.url}/auth/oidc/company/start?return=${encodeURIComponent("/console/keys?tab=mine")}`);
    await page.fill("input[name=username]", alice.username);
    await page.fill("input[name=password]", alice.password);
    await Promise.all([page.waitForURL(`${gw.url}/console/keys?tab=mine`), page.click("button")]);
    const cookies = await context.cookies(gw.url);
    await context.close();
    const session = cookies.find((c) => c.name === "llmgw_session")!;
    const csrf = cookies.find((c) => c.name === "llmgw_csrf")!;
    assert.ok(session && csrf, "both cookies set");
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, "Lax");
    assert.equal(session.secure, false, "plain HTTP on loopback: not Secure");
    assert.equal(csrf.httpOnly, false, "the console reads the CSRF cookie");
    assert.ok(!cookies.some((c) => c.name === "llmgw_signin" && c.value), "the pending sign-in's cookie is cleared");
    secrets.push(session.value);
    const s = await gw.sessions.get(session.value);
    assert.ok(s);
    assert.equal(s.via, "oidc:company");
    assert.equal(s.csrf, csrf.value);
    const person = await gw.db.person.findUniqueOrThrow({ where: { id: s.personId }, include: { identities: true, memberships: true } });
    assert.equal(person.email, "alice@example.com");
    assert.equal(person.name, "Alice Liddell");
    assert.deepEqual(person.identities.map((i) => [i.provider, i.subject]), [["company", "sub-alice"]]);
    const roles = person.memberships.map((m) => `${m.source} ${m.scope}:${m.scopeId ?? "-"} ${m.role}`).sort();
    assert.deepEqual(roles, [`company org:${orgId} org-admin`, "company platform:- viewer"]);
    const audit = await gw.db.auditEvent.findFirst({ where: { personId: person.id, action: "person.create" } });
    assert.ok(audit, "the new person is in the audit log, by themselves");
  });

  it("finds the same person at the next sign-in, and signs out with the CSRF echo only", async () => {
    const a = await authorize(browser, gw, "/auth/oidc/company/start", alice.username, alice.password);
    secrets.push(new URL(a.callback).searchParams.get("code")!);
    const r = await sendCallback(a);
    assert.equal(r.status, 303);
    assert.equal(r.headers.get("location"), "/console/");
    const token = setCookie(r, "llmgw_session")!;
    const csrf = setCookie(r, "llmgw_csrf")!;
    secrets.push(token);
    const s = (await gw.sessions.get(token))!;
    assert.equal(await gw.db.person.count({ where: { email: "alice@example.com" } }), 1);
    assert.equal((await gw.db.personIdentity.findUniqueOrThrow({ where: { provider_subject: { provider: "company", subject: "sub-alice" } } })).personId, s.personId);
    const out = (headers: Record<string, string>) => fetch(`${gw.url}/auth/logout`, { method: "POST", headers });
    const noEcho = await out({ cookie: `llmgw_session=${token}` });
    assert.equal(noEcho.status, 403);
    assert.equal(((await noEcho.json()) as { error: { code: string } }).error.code, "csrf_mismatch");
    assert.ok(await gw.sessions.get(token), "a refused sign-out ends nothing");
    const ok = await out({ cookie: `llmgw_session=${token}`, "x-csrf-token": csrf });
    assert.equal(ok.status, 204);
    assert.equal(await gw.sessions.get(token), null);
  });

  it("takes two providers at once: a partner's person is someone else, with the partner's rules", async () => {
    const r = await sendCallback(await authorize(browser, gw, "/auth/oidc/partner/start?return=/console/", carol.username, carol.password));
    assert.equal(r.status, 303);
    const s = (await gw.sessions.get(setCookie(r, "llmgw_session")!))!;
    secrets.push(setCookie(r, "llmgw_session")!);
    assert.equal(s.via, "oidc:partner");
    const m = await gw.db.membership.findMany({ where: { personId: s.personId } });
    assert.deepEqual(m.map((x) => `${x.source} ${x.scope} ${x.role}`), ["partner platform viewer"]);
  });

  it("refuses a replayed callback, a forged state, and a callback from another browser", async () => {
    const a = await authorize(browser, gw, "/auth/oidc/company/start", alice.username, alice.password);
    const first = await sendCallback(a);
    assert.equal(first.status, 303);
    secrets.push(setCookie(first, "llmgw_session")!);
    const before = await gw.db.person.count();
    const again = await sendCallback(a);
    assert.equal(again.status, 400);
    assert.equal(((await again.json()) as { error: { code: string } }).error.code, "unknown_sign_in");
    assert.equal(setCookie(again, "llmgw_session"), undefined);

    const b = await authorize(browser, gw, "/auth/oidc/company/start", alice.username, alice.password);
    const forged = new URL(b.callback);
    forged.searchParams.set("state", "forged-state-value");
    const f = await sendCallback({ ...b, callback: forged.href }, "forged-state-value");
    assert.equal(f.status, 400);
    assert.equal(((await f.json()) as { error: { code: string } }).error.code, "unknown_sign_in");

    // The right state, but not from the browser that started it (a sign-in forced on a victim).
    const other = await sendCallback(b, "another-browsers-state");
    assert.equal(other.status, 400);
    assert.equal(((await other.json()) as { error: { code: string } }).error.code, "sign_in_not_this_browser");
    assert.equal((await sendCallback(b)).status, 400, "and it is spent: the right browser must start again");
    assert.equal(await gw.db.person.count(), before);
  });

  it("refuses an ID token with the wrong audience or issuer though the provider's key signed it", async () => {
    const before = await gw.db.person.count();
    for (const [name, claim] of [["wrong-aud", "aud"], ["wrong-iss", "iss"]] as const) {
      const r = await sendCallback(await authorize(browser, gw, `/auth/oidc/${name}/start`, alice.username, alice.password));
      assert.equal(r.status, 401, name);
      const e = ((await r.json()) as { error: { code: string; message: string } }).error;
      assert.equal(e.code, "provider_answer_refused");
      assert.match(e.message, new RegExp(`"${claim}"`), `${name}: ${e.message}`);
      assert.equal(setCookie(r, "llmgw_session"), undefined);
    }
    assert.equal(await gw.db.person.count(), before);
    assert.equal(await gw.db.personIdentity.count({ where: { provider: { in: ["wrong-aud", "wrong-iss"] } } }), 0);
  });

  it("refuses a disabled person, and links nothing to them", async () => {
    const r = await sendCallback(await authorize(browser, gw, "/auth/oidc/company/start", dave.username, dave.password));
    assert.equal(r.status, 403);
    assert.equal(((await r.json()) as { error: { code: string } }).error.code, "person_disabled");
    assert.equal(setCookie(r, "llmgw_session"), undefined);
    const d = await gw.db.person.findUniqueOrThrow({ where: { email: dave.email }, include: { identities: true, memberships: true } });
    assert.deepEqual([d.identities.length, d.memberships.length], [0, 0]);
  });

  it("writes no session token, code, client secret or password to its log", () => {
    const logs = gw.logs();
    assert.match(logs, /"msg":"signed in"/, "the log was captured");
    assert.ok(secrets.length >= 5);
    for (const s of [...secrets, "company-secret", "partner-secret", alice.password, dave.password, carol.password]) assert.ok(!logs.includes(s), `the log holds ${s.slice(0, 12)}…`);
    assert.ok(!logs.includes("llmgw-sess-"), "no session token at all");
  });
});
