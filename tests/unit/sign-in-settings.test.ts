// The sign-in settings file (gateway/people/sign-in-settings.ts) is checked at start with every
// problem named by its path and no secret in any message; a return path is only ever a path of
// this gateway (gateway/client-api/auth-http.ts); ctl keeps its session in a 0600 file that
// LLMGW_SESSION overrides (common/ctl-session.ts).
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { ctlSession, readCtlSettingsFile, writeCtlSettingsFile } from "../../common/ctl-session.ts";
import { safeReturn, secureCookies } from "../../gateway/client-api/auth-http.ts";
import { IdentityProviders, readSignInSettings } from "../../gateway/people/sign-in-settings.ts";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-signin-unit-"));
const write = (name: string, text: string) => {
  const f = path.join(dir, name);
  fs.writeFileSync(f, text, { mode: 0o600 });
  return f;
};
const provider = (over = "") => `  - name: company\n    issuer: https://id.example.com\n    clientId: llmgw\n${over}`;

describe("the sign-in settings file", () => {
  it("reads several OpenID providers and LDAP, with defaults", () => {
    const secret = write("secret", "s3cret-value\n");
    const bind = write("bind", "bind-pw");
    const file = write(
      "ok.yaml",
      `oidc:\n${provider(`    clientSecretFile: ${secret}\n    label: Company\n`)}  - name: partner\n    issuer: https://partner.example.com\n    clientId: x\nldap:\n  url: ldaps://dc.example.com\n  bindDn: cn=svc\n  bindPasswordFile: ${bind}\n  userBase: ou=people\n  groups: memberOf\n`,
    );
    const s = readSignInSettings(file);
    assert.deepEqual(s.oidc.map((p) => [p.name, p.groupsClaim, p.clockToleranceS, p.scopes.join(" ")]), [["company", "groups", 30, "openid email profile"], ["partner", "groups", 30, "openid email profile"]]);
    const ips = new IdentityProviders(s);
    assert.deepEqual(ips.listing().map((p) => `${p.kind} ${p.name} ${p.label}`), ["oidc company Company", "oidc partner partner", "ldap ldap Directory (LDAP)"]);
    assert.equal(ips.ldap?.userAttribute, "uid");
  });

  it("names every problem by its path", () => {
    const cases: [string, RegExp][] = [
      [`oidc:\n${provider()}${provider()}`, /oidc\.1\.name: "company" is named twice/],
      [`oidc:\n  - name: ldap\n    issuer: https://x.example\n    clientId: a\n`, /oidc\.0\.name: "ldap" is reserved/],
      [`oidc:\n  - name: lab\n    issuer: http://x.example\n    clientId: a\n`, /oidc\.0\.issuer: an http:\/\/ issuer needs allowInsecure/],
      [`oidc:\n  - name: Bad_Name\n    issuer: https://x.example\n    clientId: a\n`, /oidc\.0\.name: lower-case/],
      [`oidc:\n  - name: a\n    issuer: not a url\n    clientId: a\n`, /oidc\.0\.issuer/],
      [`oidc:\n${provider("    clockToleranceS: 3600\n")}`, /oidc\.0\.clockToleranceS/],
      [`saml: {}\n`, /saml|Unrecognized/],
      [`ldap:\n  url: ldap://dc\n  bindDn: x\n  bindPasswordFile: /x\n  userBase: o=x\n`, /ldap\.groupBase: groupBase is needed/],
      [`oidc: [unclosed\n`, /sign-in settings .*: /],
    ];
    for (const [text, want] of cases) assert.throws(() => readSignInSettings(write("bad.yaml", text)), want, text);
  });

  it("reads client secrets from their files, and never says one in an error", () => {
    const missing = readSignInSettings(write("m.yaml", `oidc:\n${provider(`    clientSecretFile: ${path.join(dir, "absent")}\n`)}`));
    assert.throws(() => new IdentityProviders(missing), /company's clientSecretFile: cannot read .*absent: ENOENT/);
    const empty = readSignInSettings(write("e.yaml", `oidc:\n${provider(`    clientSecretFile: ${write("empty", "\n")}\n`)}`));
    assert.throws(() => new IdentityProviders(empty), /is empty/);
    const secret = write("s", "do-not-say-me");
    const file = write("b.yaml", `oidc:\n${provider(`    clientSecretFile: ${secret}\n    scopes: ["bad scope"]\n`)}`);
    assert.throws(() => readSignInSettings(file), (err: Error) => /oidc\.0\.scopes\.0/.test(err.message) && !err.message.includes("do-not-say-me"));
  });
});

describe("a return path", () => {
  it("is a path of this gateway, normalised", () => {
    assert.equal(safeReturn(undefined), "/console/");
    assert.equal(safeReturn("/console/keys?tab=mine#new"), "/console/keys?tab=mine#new");
    assert.equal(safeReturn("/console/../api/v1/me"), "/api/v1/me");
  });

  it("never leads to another site", () => {
    for (const bad of ["https://evil.example", "//evil.example", "/\\evil.example", "\\\\evil.example", "javascript:alert(1)", "/\t/evil.example", "/\n/evil", "evil.example", ["/a", "/b"], "/" + "a".repeat(3000)]) {
      assert.throws(() => safeReturn(bad), /return must be a path on this gateway/, JSON.stringify(bad));
    }
  });

  it("gets Secure cookies except over plain HTTP on loopback", () => {
    assert.equal(secureCookies(new URL("http://127.0.0.1:8080")), false);
    assert.equal(secureCookies(new URL("http://localhost:8080")), false);
    assert.equal(secureCookies(new URL("https://llm.example.com")), true);
    assert.equal(secureCookies(new URL("http://llm.example.com")), true);
  });
});

describe("ctl's session", () => {
  it("is kept in a file of mode 0600, field session, and LLMGW_SESSION wins", () => {
    const env = { LLMGW_CTL_FILE: path.join(dir, "nested", "ctl.json") };
    assert.equal(ctlSession(env), undefined);
    writeCtlSettingsFile({ url: "http://127.0.0.1:8080", session: "llmgw-sess-from-file" }, env);
    assert.equal(fs.statSync(env.LLMGW_CTL_FILE).mode & 0o777, 0o600);
    assert.deepEqual(ctlSession(env), { token: "llmgw-sess-from-file", url: "http://127.0.0.1:8080" });
    assert.deepEqual(ctlSession({ ...env, LLMGW_SESSION: "llmgw-sess-from-env" }), { token: "llmgw-sess-from-env" });
    assert.equal(readCtlSettingsFile(env).session, "llmgw-sess-from-file");
    fs.writeFileSync(env.LLMGW_CTL_FILE, "not json");
    assert.throws(() => ctlSession(env), /is not JSON; remove it and run llmgw ctl login again/);
  });
});
