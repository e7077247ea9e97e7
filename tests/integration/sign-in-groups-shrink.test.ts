// Groups that shrink between sign-ins, end to end: a person taken out of a group at the company's
// OpenID provider (its accounts changed while it runs, tests/helpers/oidc-op.ts) or in the real
// slapd (ldapmodify, tests/helpers/ldap.ts) loses the membership that group gave at their next
// sign-in, and only that one: another group's, another provider's and a hand-made membership stay.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { launchBrowser } from "../helpers/browser.ts";
import { LDAP_BASE, LDAP_SERVICE_DN, startSlapd, type Slapd } from "../helpers/ldap.ts";
import { startOidcOp, type OidcOp, type OpPerson } from "../helpers/oidc-op.ts";
import { freePort } from "../helpers/platform.ts";
import { authorize, secretFile, sendCallback, setCookie, startSignInGateway, type SignInGateway } from "../helpers/sign-in-gateway.ts";

const bob: OpPerson = { sub: "sub-bob-shrink", username: "bob", password: "builder-7", email: "bob.shrink@example.com", name: "Bob Builder", groups: ["engineering", "ml-platform"] };
const frank = { uid: "frank", name: "Frank Shrink", mail: "frank.shrink@example.com", password: "ldap-frank-9" };

describe("groups that shrink between sign-ins", () => {
  let op: OidcOp;
  let slapd: Slapd;
  let gw: SignInGateway;
  let browser: Browser;
  const orgId = randomUUID();

  before(async () => {
    const port = await freePort();
    op = await startOidcOp([bob], [{ client_id: "llmgw", client_secret: "shrink-secret", redirect_uris: [`http://127.0.0.1:${port}/auth/oidc/company/callback`] }]);
    // groupOfNames needs a member: gina stays in ml-users when frank leaves it.
    slapd = await startSlapd([frank, { uid: "gina", name: "Gina Stays", mail: "gina.shrink@example.com", password: "ldap-gina-2" }], { engineering: ["frank"], "ml-users": ["frank", "gina"] });
    gw = await startSignInGateway(port, {
      oidc: [{ name: "company", issuer: op.issuer, clientId: "llmgw", clientSecretFile: secretFile("secret", "shrink-secret"), scopes: ["openid", "email", "profile", "groups"], allowInsecure: true }],
      ldap: { url: slapd.url, bindDn: LDAP_SERVICE_DN, bindPasswordFile: secretFile("bind", slapd.servicePassword), userBase: `ou=people,${LDAP_BASE}`, groupBase: `ou=groups,${LDAP_BASE}` },
    });
    await gw.db.groupMapping.deleteMany({});
    await gw.db.groupMapping.createMany({
      data: [
        { id: randomUUID(), provider: "company", group: "engineering", scope: "org", scopeId: orgId, role: "org-admin" },
        { id: randomUUID(), provider: "company", group: "ml-platform", scope: "platform", scopeId: null, role: "viewer" },
        { id: randomUUID(), provider: "ldap", group: "engineering", scope: "platform", scopeId: null, role: "operator" },
        { id: randomUUID(), provider: "ldap", group: "ml-users", scope: "platform", scopeId: null, role: "viewer" },
      ],
    });
    await gw.db.person.deleteMany({ where: { email: { in: [bob.email, frank.mail] } } });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await gw?.close();
    await op?.stop();
    await slapd?.stop();
  });

  const rolesOf = async (personId: string) => (await gw.db.membership.findMany({ where: { personId } })).map((m) => `${m.source} ${m.scope}:${m.scopeId ?? "-"} ${m.role}`).sort();

  /** A whole code-flow sign-in in a fresh browser; the session's person. */
  const oidcSignIn = async (who: OpPerson): Promise<string> => {
    const r = await sendCallback(await authorize(browser, gw, "/auth/oidc/company/start", who.username, who.password));
    assert.equal(r.status, 303, await r.text());
    return (await gw.sessions.get(setCookie(r, "llmgw_session")!))!.personId;
  };
  const ldapSignIn = async (): Promise<string> => {
    const r = await fetch(`${gw.url}/auth/ldap`, { method: "POST", headers: { "content-type": "application/json", origin: gw.url }, body: JSON.stringify({ username: frank.uid, password: frank.password }) });
    assert.equal(r.status, 200, await r.clone().text());
    return ((await r.json()) as { person: { id: string } }).person.id;
  };

  it("OIDC: a group the provider no longer sends takes its membership away at the next sign-in", async () => {
    const id = await oidcSignIn(bob);
    assert.deepEqual(await rolesOf(id), [`company org:${orgId} org-admin`, "company platform:- viewer"]);
    // Given by hand: no sign-in touches it.
    await gw.db.membership.create({ data: { id: randomUUID(), personId: id, scope: "platform", scopeId: null, role: "operator", source: "manual" } });

    op.setPeople([{ ...bob, groups: ["engineering"] }]);
    assert.equal(await oidcSignIn(bob), id, "the same person");
    assert.deepEqual(await rolesOf(id), [`company org:${orgId} org-admin`, "manual platform:- operator"], "ml-platform's viewer is gone, the rest stay");

    op.setPeople([{ ...bob, groups: [] }]);
    await oidcSignIn(bob);
    assert.deepEqual(await rolesOf(id), ["manual platform:- operator"], "no groups: no group memberships");
    const synced = await gw.db.auditEvent.findMany({ where: { personId: id, action: "membership.sync" }, orderBy: { at: "asc" } });
    assert.deepEqual(
      synced.map((a) => (a.before as { removed: { role: string }[] }).removed.map((r) => r.role)),
      [[], ["viewer"], ["org-admin"]],
      "each change is in the audit log, naming the person",
    );
  });

  it("LDAP: taken out of a group in the directory, the person loses its membership at the next bind", async () => {
    const id = await ldapSignIn();
    assert.deepEqual(await rolesOf(id), ["ldap platform:- operator", "ldap platform:- viewer"]);

    slapd.modify(`dn: cn=ml-users,ou=groups,${LDAP_BASE}\nchangetype: modify\ndelete: member\nmember: uid=frank,ou=people,${LDAP_BASE}\n`);
    assert.equal(await ldapSignIn(), id, "the same person");
    assert.deepEqual(await rolesOf(id), ["ldap platform:- operator"], "ml-users' viewer is gone");

    // Put back in, it comes back.
    slapd.modify(`dn: cn=ml-users,ou=groups,${LDAP_BASE}\nchangetype: modify\nadd: member\nmember: uid=frank,ou=people,${LDAP_BASE}\n`);
    await ldapSignIn();
    assert.deepEqual(await rolesOf(id), ["ldap platform:- operator", "ldap platform:- viewer"]);
  });
});
