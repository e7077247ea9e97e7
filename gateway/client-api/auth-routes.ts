// Sign-in on the client port, /auth/*: the providers, the OpenID code flow with PKCE (its state,
// nonce and verifier kept in Redis under the state's hash for ten minutes and taken once, so a
// callback replayed or forged finds nothing), LDAP's bind, sign-out, and the device flow for
// `llmgw ctl login` (./auth-device.ts) and its loopback browser callback (./auth-loopback.ts). A successful sign-in sets the session's cookies.
import { createHash } from "node:crypto";
import express, { Router, type Request } from "express";
import { z } from "zod";
import { log } from "../../common/logging.ts";
import { ApiError } from "../errors.ts";
import { ldapSignIn, SignInRefused } from "../people/ldap.ts";
import type { PendingSignIn } from "../people/oidc.ts";
import type { SignedIn } from "../people/sign-in.ts";
import { csrfMatches } from "../people/sessions.ts";
import { deviceRoutes } from "./auth-device.ts";
import { loopbackOf, loopbackRedirect, loopbackRoutes, type Loopback } from "./auth-loopback.ts";
import { clearSessionCookies, cookieOf, equalSecret, oidcProviderOf, refusedAnswer, safeReturn, sameOrigin, secureCookies, sessionTokenOf, setSessionCookies, signIn, SIGN_IN_COOKIE, type AuthDeps } from "./auth-http.ts";

/** How long a started OpenID sign-in waits for its callback. */
const PENDING_S = 600;
const pendingKey = (state: string) => `llmgw:signin:${createHash("sha256").update(state).digest("hex")}`;

interface Pending extends PendingSignIn {
  provider: string;
  return: string;
  /** Started by `ctl login --browser`: finished at ctl's loopback, not with cookies. */
  cli?: Loopback;
}

/** A single query value, or a 400 naming it. */
function queryValue(req: Request, name: string, max = 2048): string {
  const v = req.query[name];
  if (typeof v !== "string" || v.length === 0 || v.length > max) throw new ApiError("invalid_request", `the callback needs one ${name} parameter`, { param: name, code: `invalid_${name}` });
  return v;
}

const ldapBody = z.object({
  username: z.string({ error: "username is required" }).min(1, "username is required").max(256),
  password: z.string({ error: "password is required" }).min(1, "password is required").max(1024),
  return: z.string().optional(),
});

export function authRoutes(deps: AuthDeps): Router & { close(): void } {
  const r = Router();
  // Small bodies: a name and a password, or a device code.
  r.use(express.json({ limit: "16kb" }), express.urlencoded({ extended: false, limit: "16kb", parameterLimit: 10 }));

  r.get("/providers", (_req, res) => void res.json({ providers: deps.providers.listing() }));

  r.get("/oidc/:name/start", async (req, res) => {
    const name = req.params.name!;
    const back = safeReturn(req.query.return);
    const cli = loopbackOf(req.query);
    const provider = await oidcProviderOf(deps, name);
    const publicUrl = deps.publicUrl();
    const { url, pending } = await provider.start(new URL(`/auth/oidc/${name}/callback`, publicUrl).href);
    await deps.redis.set(pendingKey(pending.state), JSON.stringify({ ...pending, provider: name, return: back, ...(cli ? { cli } : {}) } satisfies Pending), "EX", PENDING_S);
    res.cookie(SIGN_IN_COOKIE, pending.state, { httpOnly: true, sameSite: "lax", secure: secureCookies(publicUrl), path: "/auth/oidc", maxAge: PENDING_S * 1000 });
    res.redirect(302, url);
  });

  r.get("/oidc/:name/callback", async (req, res) => {
    const name = req.params.name!;
    const publicUrl = deps.publicUrl();
    if (req.query.error !== undefined) {
      const e = String(req.query.error).replace(/[^a-z_]/g, "").slice(0, 64);
      if (typeof req.query.state === "string") await deps.redis.del(pendingKey(req.query.state));
      throw new ApiError("authentication", `the identity provider refused the sign-in: ${e || "an error"}`, { code: "provider_refused" });
    }
    const state = queryValue(req, "state", 512);
    queryValue(req, "code");
    // Taken once: a replayed callback, or one of a sign-in never started here, finds nothing.
    const raw = await deps.redis.getdel(pendingKey(state));
    if (!raw) throw new ApiError("invalid_request", "this sign-in is unknown, expired or already finished; start it again", { param: "state", code: "unknown_sign_in" });
    const pending = JSON.parse(raw) as Pending;
    if (pending.provider !== name) throw new ApiError("invalid_request", "this callback belongs to another provider's sign-in", { param: "state", code: "unknown_sign_in" });
    // Only the browser that started the sign-in may finish it (no one else's sign-in forced on it).
    const mine = cookieOf(req, SIGN_IN_COOKIE);
    if (!mine || !equalSecret(mine, state)) throw new ApiError("invalid_request", "this sign-in was not started in this browser; start it again", { param: "state", code: "sign_in_not_this_browser" });
    const provider = await oidcProviderOf(deps, name);
    const callback = new URL(pending.redirectUri);
    callback.search = new URL(req.originalUrl, publicUrl).search;
    let who: SignedIn;
    try {
      who = await provider.finish(callback, pending);
    } catch (err) {
      throw refusedAnswer(name, err);
    }
    const done = await signIn(deps, who, `oidc:${name}`);
    res.clearCookie(SIGN_IN_COOKIE, { httpOnly: true, sameSite: "lax", secure: secureCookies(publicUrl), path: "/auth/oidc" });
    if (pending.cli) return void res.redirect(303, await loopbackRedirect(deps.redis, pending.cli, { token: done.token, personId: done.personId, expiresAt: done.session.expiresAt }));
    setSessionCookies(res, publicUrl, done.token, done.session);
    res.redirect(303, pending.return);
  });

  r.post("/ldap", async (req, res) => {
    const ldap = deps.providers.ldap;
    if (!ldap) throw new ApiError("not_found", "LDAP sign-in is not configured on this gateway", { code: "unknown_provider" });
    const publicUrl = deps.publicUrl();
    sameOrigin(req, publicUrl);
    const parsed = ldapBody.safeParse(req.body ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new ApiError("invalid_request", `${issue.path.join(".") || "body"}: ${issue.message}`, { param: String(issue.path[0] ?? "") || null, code: "invalid_sign_in" });
    }
    const back = safeReturn(parsed.data.return);
    let person;
    try {
      person = await ldapSignIn(ldap, parsed.data.username, parsed.data.password);
    } catch (err) {
      if (err instanceof SignInRefused) {
        log.info("LDAP sign-in refused", { reason: "wrong name or password" });
        throw new ApiError("authentication", "wrong name or password", { code: "wrong_credentials" });
      }
      log.warn("the LDAP directory failed a sign-in", { error: (err as Error).message });
      throw new ApiError("unavailable", "the directory cannot be reached; try again later", { code: "provider_unavailable" });
    }
    const done = await signIn(deps, { provider: "ldap", subject: person.dn.toLowerCase(), email: person.email, name: person.name, groups: person.groups }, "ldap");
    setSessionCookies(res, publicUrl, done.token, done.session);
    // A browser's form goes on to where it was; a script gets the answer.
    if (req.is("application/x-www-form-urlencoded")) return void res.redirect(303, back);
    res.json({ person: { id: done.personId }, csrf: done.session.csrf, expires_at: new Date(done.session.expiresAt).toISOString(), return: back });
  });

  r.post("/logout", async (req, res) => {
    const publicUrl = deps.publicUrl();
    const carried = sessionTokenOf(req);
    if (!carried) throw new ApiError("authentication", "not signed in: no session cookie or bearer", { code: "not_signed_in" });
    const session = await deps.sessions.get(carried.token);
    if (!session) {
      clearSessionCookies(res, publicUrl);
      throw new ApiError("authentication", "this session has ended already", { code: "session_ended" });
    }
    // A cookie rides along on any site's request: sign-out by cookie needs the CSRF echo.
    if (carried.by === "cookie" && !csrfMatches(session, req.get("x-csrf-token"))) throw new ApiError("permission", "x-csrf-token must be the llmgw_csrf cookie's value", { code: "csrf_mismatch" });
    await deps.sessions.revoke(carried.token);
    clearSessionCookies(res, publicUrl);
    log.info("signed out", { person: session.personId, via: session.via });
    res.status(204).end();
  });

  r.use("/cli", loopbackRoutes(deps.redis));
  const device = deviceRoutes(deps);
  r.use("/device", device);
  // Every other /auth path is this API's JSON 404.
  r.use((req, _res, next) => next(new ApiError("not_found", `no route ${req.method} ${req.originalUrl.split("?")[0]}`, { code: "unknown_route" })));
  return Object.assign(r, { close: () => device.close() });
}
