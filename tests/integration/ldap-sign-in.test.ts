// LDAP sign-in (gateway/people/ldap.ts) against a real OpenLDAP the test starts with people and
// groups of its own: the right password signs in and reads the groups; a wrong one, an unknown
// name, an empty password (an anonymous bind to LDAP) and a name that tries to widen the search are
// all the same refusal.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { ldapSettings, ldapSignIn, rdnValue, SignInRefused, type LdapSettings } from "../../gateway/people/ldap.ts";
import { LDAP_BASE, LDAP_SERVICE_DN, startSlapd, type Slapd } from "../helpers/ldap.ts";

describe("sign-in through LDAP", () => {
  let slapd: Slapd;
  let settings: LdapSettings;
  const people = [
    { uid: "alice", name: "Alice Liddell", mail: "alice@example.com", password: "wonder-land-1" },
    { uid: "bob", name: "Bob Dobbs", mail: "bob@example.com", password: "slack-2" },
  ];

  before(async () => {
    slapd = await startSlapd(people, { engineering: ["alice"], "ml-platform": ["alice", "bob"], finance: ["bob"] });
    const pw = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-ldap-")), "bind-password");
    fs.writeFileSync(pw, slapd.servicePassword + "\n", { mode: 0o600 });
    settings = ldapSettings.parse({ url: slapd.url, bindDn: LDAP_SERVICE_DN, bindPasswordFile: pw, userBase: `ou=people,${LDAP_BASE}`, groupBase: `ou=groups,${LDAP_BASE}` });
  });

  after(async () => {
    await slapd?.stop();
  });

  it("signs a person in with their password and reads their groups", async () => {
    const a = await ldapSignIn(settings, "alice", "wonder-land-1");
    assert.deepEqual(a, { dn: `uid=alice,ou=people,${LDAP_BASE}`, username: "alice", email: "alice@example.com", name: "Alice Liddell", groups: ["engineering", "ml-platform"] });
    assert.deepEqual((await ldapSignIn(settings, "bob", "slack-2")).groups, ["finance", "ml-platform"]);
  });

  it("refuses a wrong password, an unknown name and an empty password alike", async () => {
    for (const [name, password] of [
      ["alice", "not-it"],
      ["alice", "slack-2"],
      ["carol", "wonder-land-1"],
      ["alice", ""],
      ["", "x"],
    ]) {
      await assert.rejects(ldapSignIn(settings, name!, password!), SignInRefused, `${name}/${password ? "***" : "(empty)"}`);
    }
  });

  it("takes a name as a value, never as filter syntax", async () => {
    for (const name of ["*", "alice)(uid=*", "ali*", "bob)(|(uid=*"]) await assert.rejects(ldapSignIn(settings, name, "wonder-land-1"), SignInRefused, name);
  });

  it("fails loudly, not as a refusal, when the service account's password is wrong", async () => {
    const wrong = path.join(path.dirname(settings.bindPasswordFile), "wrong");
    fs.writeFileSync(wrong, "nope", { mode: 0o600 });
    await assert.rejects(ldapSignIn({ ...settings, bindPasswordFile: wrong }, "alice", "wonder-land-1"), (err: Error) => !(err instanceof SignInRefused));
  });

  it("refuses settings that do not say where groups are, and reads an RDN's value", () => {
    assert.equal(ldapSettings.safeParse({ url: slapd.url, bindDn: "x", bindPasswordFile: "/x", userBase: "o=x" }).success, false);
    assert.equal(ldapSettings.safeParse({ url: "http://example.com", bindDn: "x", bindPasswordFile: "/x", userBase: "o=x", groups: "memberOf" }).success, false);
    assert.equal(rdnValue("cn=R\\2cD,ou=groups,dc=example,dc=com"), "R,D");
  });
});
