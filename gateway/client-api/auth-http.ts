// What the sign-in routes share: where a person may be sent back to (only a path of this gateway,
// never another site: an open redirect would hand a phishing page this gateway's name), the
// session's cookies, and the session a request carries (a bearer for ctl, the cookie for browsers).
import { timingSafeEqual } from "node:crypto";
import type { Request, Response } from "express";
import { log } from "../../common/logging.ts";
import { ApiError } from "../errors.ts";
import type { OidcProvider } from "../people/oidc.ts";
import { completeSignIn, PersonDisabled, type SignedIn, type SignInDeps } from "../people/sign-in.ts";
import type { IdentityProviders } from "../people/sign-in-settings.ts";
import { CSRF_COOKIE, SESSION_COOKIE, SESSION_TOKEN_PREFIX, type Session } from "../people/sessions.ts";

/** Where a browser goes after signing in when the sign-in did not say. */
export const DEFAULT_RETURN = "/console/";
/** Holds the pending OIDC sign-in's state in the browser that started it (login CSRF). */
export const SIGN_IN_COOKIE = "llmgw_signin";

const ORIGIN = "http://return.invalid";

/** A return path of this gateway, or a 400: only same-origin relative paths, no scheme, host, `//` or backslash. */
export function safeReturn(raw: unknown): string {
  if (raw === undefined || raw === "") return DEFAULT_RETURN;
  const bad = (why: string) => new ApiError("invalid_request", `return must be a path on this gateway (like /console/): ${why}`, { param: "return", code: "invalid_return" });
  if (typeof raw !== "string") throw bad("given more than once");
  if (raw.length > 2048) throw bad("longer than 2048 characters");
  // "//host" and "/\host" are other sites to a browser; control characters can hide either.
  const control = [...raw].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f);
  if (!raw.startsWith("/") || raw.startsWith("//") || raw.includes("\\") || control) throw bad("not a path beginning with a single /");
  const u = new URL(raw, ORIGIN);
  if (u.origin !== ORIGIN) throw bad("it leads to another site");
  return u.pathname + u.search + u.hash;
}

export const isLoopback = (host: string): boolean => host === "localhost" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);

/** Cookies are Secure unless the gateway is reached over plain HTTP on loopback (tests, a laptop). */
export const secureCookies = (publicUrl: URL): boolean => publicUrl.protocol === "https:" || !isLoopback(publicUrl.hostname);

/** One cookie of the request, or undefined; a cookie given twice counts as none (a planted second one). */
export function cookieOf(req: Request, name: string): string | undefined {
  const found: string[] = [];
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) found.push(part.slice(eq + 1).trim());
  }
  return found.length === 1 ? found[0] : undefined;
}

/** Sets the session cookie (HttpOnly) and the CSRF cookie the console reads and echoes in x-csrf-token. */
export function setSessionCookies(res: Response, publicUrl: URL, token: string, session: Session): void {
  const common = { sameSite: "lax" as const, secure: secureCookies(publicUrl), path: "/", expires: new Date(session.expiresAt) };
  res.cookie(SESSION_COOKIE, token, { ...common, httpOnly: true });
  res.cookie(CSRF_COOKIE, session.csrf, { ...common, httpOnly: false });
}

export function clearSessionCookies(res: Response, publicUrl: URL): void {
  const common = { sameSite: "lax" as const, secure: secureCookies(publicUrl), path: "/" };
  res.clearCookie(SESSION_COOKIE, { ...common, httpOnly: true });
  res.clearCookie(CSRF_COOKIE, common);
}

/** The session token a request carries and how: `Authorization: Bearer llmgw-sess-…` (ctl) or the cookie (a browser). */
export function sessionTokenOf(req: Request): { token: string; by: "bearer" | "cookie" } | undefined {
  const auth = req.headers.authorization;
  if (auth) {
    const m = /^Bearer\s+(\S+)$/i.exec(auth);
    if (!m || !m[1]!.startsWith(SESSION_TOKEN_PREFIX)) throw new ApiError("authentication", "the Authorization header must be `Bearer llmgw-sess-…` (a session from ctl login)", { code: "invalid_authorization" });
    return { token: m[1]!, by: "bearer" };
  }
  const cookie = cookieOf(req, SESSION_COOKIE);
  return cookie ? { token: cookie, by: "cookie" } : undefined;
}

/** Refuses a form posted from another site (login CSRF); a request with no Origin (ctl, curl) passes. */
export function sameOrigin(req: Request, publicUrl: URL): void {
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== publicUrl.origin) throw new ApiError("permission", `a sign-in form may only be posted from ${publicUrl.origin}`, { code: "cross_origin" });
}

export function equalSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export interface AuthDeps extends SignInDeps {
  providers: IdentityProviders;
  /** The client port's URL as browsers reach it (redirect URIs, cookies' Secure); read per request. */
  publicUrl: () => URL;
}

/** The named provider, discovered; 404 for a name not configured, 503 while it cannot be reached. */
export async function oidcProviderOf(deps: AuthDeps, name: string): Promise<OidcProvider> {
  let p: OidcProvider | undefined;
  try {
    p = await deps.providers.oidc(name);
  } catch (err) {
    log.warn("an OpenID provider cannot be reached", { provider: name, error: (err as Error).message });
    throw new ApiError("unavailable", `the identity provider ${name} cannot be reached; try again later`, { code: "provider_unavailable" });
  }
  if (!p) throw new ApiError("not_found", `no identity provider named ${JSON.stringify(name.slice(0, 64))}; GET /auth/providers lists them`, { code: "unknown_provider" });
  return p;
}

/** A refusal of the provider's answer: its reason (openid-client's words name the claim, never a token). */
export function refusedAnswer(provider: string, err: unknown): ApiError {
  // openid-client's own error wraps the check that failed (its message names the claim, never holds the token).
  const inner = (err as { cause?: unknown }).cause;
  const detail = inner instanceof Error && inner.message !== (err as Error).message ? `: ${inner.message}` : "";
  const reason = `${(err as Error).message ?? "refused"}${detail}`.slice(0, 240);
  log.warn("an identity provider's answer was refused", { provider, reason });
  return new ApiError("authentication", `the identity provider's answer was refused: ${reason}`, { code: "provider_answer_refused" });
}

export const disabledRefusal = () => new ApiError("permission", "this account is disabled; ask an administrator", { code: "person_disabled" });

/** completeSignIn with a disabled person as this API's 403. */
export async function signIn(deps: AuthDeps, who: SignedIn, via: string): ReturnType<typeof completeSignIn> {
  try {
    return await completeSignIn(deps, who, via);
  } catch (err) {
    if (err instanceof PersonDisabled) throw disabledRefusal();
    throw err;
  }
}
