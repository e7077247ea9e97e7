// Malformed and hostile sign-in requests on the client port: each gets a clear error in the API's
// shape (status, code, a message saying what is wrong) and changes nothing: no person, identity or
// membership, no session, nothing kept in Redis. Open redirects are among them: a return that
// leads anywhere but a path of this gateway is refused before the provider is asked.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { LDAP_BASE, LDAP_SERVICE_DN, startSlapd, type Slapd } from "../helpers/ldap.ts";
import { startOidcOp, type OidcOp } from "../helpers/oidc-op.ts";
import { freePort } from "../helpers/platform.ts";
import { secretFile, startSignInGateway, type SignInGateway } from "../helpers/sign-in-gateway.ts";

interface Case {
  what: string;
  method?: "GET" | "POST";
  path: string;
  headers?: Record<string, string>;
  body?: string;
  status: number;
  code: string;
  /** A word the message must say. */
  says: RegExp;
}

const json = { "content-type": "application/json" };
const R = (ret: string) => `/auth/oidc/company/start?return=${encodeURIComponent(ret)}`;

const CASES: Case[] = [
  { what: "an unknown provider", path: "/auth/oidc/nope/start", status: 404, code: "unknown_provider", says: /no identity provider named "nope"/ },
  { what: "an absolute URL to return to", path: R("https://evil.example/"), status: 400, code: "invalid_return", says: /path on this gateway/ },
  { what: "a scheme-relative URL", path: R("//evil.example/x"), status: 400, code: "invalid_return", says: /single \// },
  { what: "a backslash that browsers read as //", path: R("/\\evil.example"), status: 400, code: "invalid_return", says: /single \// },
  { what: "a javascript: URL", path: R("javascript:alert(1)"), status: 400, code: "invalid_return", says: /single \// },
  { what: "a tab hiding //", path: R("/\t/evil.example"), status: 400, code: "invalid_return", says: /single \// },
  { what: "return given twice", path: "/auth/oidc/company/start?return=/a&return=/b", status: 400, code: "invalid_return", says: /more than once/ },
  { what: "a callback with no state", path: "/auth/oidc/company/callback?code=abc", status: 400, code: "invalid_state", says: /one state parameter/ },
  { what: "a callback with no code", path: "/auth/oidc/company/callback?state=abc", status: 400, code: "invalid_code", says: /one code parameter/ },
  { what: "a callback of a sign-in never started", path: "/auth/oidc/company/callback?state=never-started&code=abc", status: 400, code: "unknown_sign_in", says: /unknown, expired or already finished/ },
  { what: "a callback with two states", path: "/auth/oidc/company/callback?state=a&state=b&code=abc", status: 400, code: "invalid_state", says: /one state/ },
  { what: "the provider's refusal", path: "/auth/oidc/company/callback?error=access_denied&state=x", status: 401, code: "provider_refused", says: /access_denied/ },
  { what: "LDAP with no body", method: "POST", path: "/auth/ldap", headers: json, body: "{}", status: 400, code: "invalid_sign_in", says: /username is required/ },
  { what: "LDAP with no password", method: "POST", path: "/auth/ldap", headers: json, body: '{"username":"alice"}', status: 400, code: "invalid_sign_in", says: /password is required/ },
  { what: "LDAP with a wrong password", method: "POST", path: "/auth/ldap", headers: json, body: '{"username":"alice","password":"nope"}', status: 401, code: "wrong_credentials", says: /wrong name or password/ },
  { what: "LDAP with an unknown name", method: "POST", path: "/auth/ldap", headers: json, body: '{"username":"mallory","password":"wonder-land-1"}', status: 401, code: "wrong_credentials", says: /wrong name or password/ },
  { what: "LDAP with a filter for a name", method: "POST", path: "/auth/ldap", headers: json, body: '{"username":"*)(uid=*","password":"wonder-land-1"}', status: 401, code: "wrong_credentials", says: /wrong name or password/ },
  { what: "LDAP with a name that is not text", method: "POST", path: "/auth/ldap", headers: json, body: '{"username":["alice"],"password":"wonder-land-1"}', status: 400, code: "invalid_sign_in", says: /username/ },
  { what: "LDAP posted from another site", method: "POST", path: "/auth/ldap", headers: { ...json, origin: "https://evil.example" }, body: '{"username":"alice","password":"wonder-land-1"}', status: 403, code: "cross_origin", says: /only be posted from/ },
  { what: "LDAP with an open redirect", method: "POST", path: "/auth/ldap", headers: json, body: '{"username":"alice","password":"wonder-land-1","return":"https://evil.example"}', status: 400, code: "invalid_return", says: /path on this gateway/ },
  { what: "a body that is not JSON", method: "POST", path: "/auth/ldap", headers: json, body: '{"username":', status: 400, code: "invalid_json", says: /not valid JSON/ },
  { what: "sign-out with no session", method: "POST", path: "/auth/logout", status: 401, code: "not_signed_in", says: /not signed in/ },
  { what: "sign-out with an API key for a bearer", method: "POST", path: "/auth/logout", headers: { authorization: "Bearer sk-llmgw-not-a-session" }, status: 401, code: "invalid_authorization", says: /llmgw-sess-/ },
  { what: "sign-out with an ended session", method: "POST", path: "/auth/logout", headers: { cookie: "llmgw_session=llmgw-sess-ended" }, status: 401, code: "session_ended", says: /ended already/ },
  { what: "a device flow with an unknown provider", method: "POST", path: "/auth/device/start", headers: json, body: '{"provider":"nope"}', status: 404, code: "unknown_provider", says: /no identity provider/ },
  { what: "a device flow with a field it does not take", method: "POST", path: "/auth/device/start", headers: json, body: '{"client_secret":"x"}', status: 400, code: "invalid_device_request", says: /client_secret|Unrecognized/ },
  { what: "a poll with no handle", method: "POST", path: "/auth/device/poll", headers: json, body: "{}", status: 400, code: "invalid_device_request", says: /handle is required/ },
  { what: "a poll with a made-up handle", method: "POST", path: "/auth/device/poll", headers: json, body: `{"handle":"llmgw-dev-${"A".repeat(43)}"}`, status: 400, code: "unknown_device_sign_in", says: /unknown, expired/ },
  { what: "a poll with a handle of the wrong shape", method: "POST", path: "/auth/device/poll", headers: json, body: '{"handle":"../../etc"}', status: 400, code: "invalid_device_request", says: /not one \/auth\/device\/start gave/ },
  { what: "an /auth path that does not exist", path: "/auth/saml/login", status: 404, code: "unknown_route", says: /no route GET \/auth\/saml\/login/ },
];

describe("malformed sign-in requests get clear errors and change nothing", () => {
  let op: OidcOp;
  let slapd: Slapd;
  let gw: SignInGateway;

  before(async () => {
    const port = await freePort();
    op = await startOidcOp([], [{ client_id: "llmgw", client_secret: "refusals-secret", redirect_uris: [`http://127.0.0.1:${port}/auth/oidc/company/callback`], device: true }]);
    slapd = await startSlapd([{ uid: "alice", name: "Alice Liddell", mail: "alice.refusals@example.com", password: "wonder-land-1" }], {});
    gw = await startSignInGateway(port, {
      oidc: [{ name: "company", issuer: op.issuer, clientId: "llmgw", clientSecretFile: secretFile("secret", "refusals-secret"), allowInsecure: true }],
      ldap: { url: slapd.url, bindDn: LDAP_SERVICE_DN, bindPasswordFile: secretFile("bind", slapd.servicePassword), userBase: `ou=people,${LDAP_BASE}`, groups: "memberOf" },
    });
    await gw.db.person.deleteMany({ where: { email: "alice.refusals@example.com" } });
  });

  after(async () => {
    await gw?.close();
    await op?.stop();
    await slapd?.stop();
  });

  /**
   * The store's rows and Redis's keys. Keys that earlier files of the lane left with a time to live
   * (answers, batch lines) may expire meanwhile: those count only if they appear.
   */
  const state = async () => {
    const keys = (await gw.redis.keys("llmgw:*")).sort();
    const ttls = await Promise.all(keys.map((k) => gw.redis.pttl(k)));
    const rows = { people: await gw.db.person.count(), identities: await gw.db.personIdentity.count(), memberships: await gw.db.membership.count() };
    return { rows, keys, lastingKeys: keys.filter((_, i) => ttls[i] === -1) };
  };

  it(`answers each of ${CASES.length} in the API's error shape`, async () => {
    assert.ok(CASES.length >= 15);
    const before = await state();
    for (const c of CASES) {
      const r = await fetch(gw.url + c.path, { method: c.method ?? "GET", headers: c.headers, body: c.body, redirect: "manual" });
      const text = await r.text();
      assert.equal(r.status, c.status, `${c.what}: ${text}`);
      const e = (JSON.parse(text) as { error: { code: string; message: string; type: string } }).error;
      assert.equal(e.code, c.code, `${c.what}: ${text}`);
      assert.match(e.message, c.says, `${c.what}: ${e.message}`);
      assert.ok(e.type.endsWith("_error"), c.what);
      assert.ok(!r.headers.getSetCookie().some((h) => /^llmgw_(session|csrf|signin)=[^;]/.test(h)), `${c.what}: set a cookie`);
    }
    const now = await state();
    assert.deepEqual(now.rows, before.rows, "no row changed");
    assert.deepEqual(now.lastingKeys, before.lastingKeys, "no lasting key changed");
    assert.deepEqual(now.keys.filter((k) => !before.keys.includes(k)), [], "no key added");
  });

  it("keeps nothing in the URL: a start keeps its verifier and nonce in Redis, not in the redirect", async () => {
    const earlier = new Set(await gw.redis.keys("llmgw:signin:*"));
    const r = await fetch(`${gw.url}${R("/console/models")}`, { redirect: "manual" });
    assert.equal(r.status, 302);
    const to = new URL(r.headers.get("location")!);
    assert.equal(to.origin, op.issuer);
    assert.equal(to.searchParams.get("code_challenge_method"), "S256");
    assert.equal(to.searchParams.get("redirect_uri"), `${gw.url}/auth/oidc/company/callback`);
    assert.ok(!to.href.includes("/console/models"), "the return path stays with the gateway");
    const keys = (await gw.redis.keys("llmgw:signin:*")).filter((k) => !earlier.has(k));
    assert.equal(keys.length, 1, "one pending sign-in kept");
    assert.ok(!keys[0]!.includes(to.searchParams.get("state")!), "kept under the state's hash");
    assert.ok(0 < (await gw.redis.ttl(keys[0]!)) && (await gw.redis.ttl(keys[0]!)) <= 600);
  });
});
