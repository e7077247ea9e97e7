// /mcp as an OAuth 2.1 protected resource, as the MCP specification's authorization section has
// it: the protected-resource metadata (RFC 9728) names the company's identity providers (the
// OpenID providers people sign in with, LLMGW_SIGN_IN_FILE) as its authorization servers; a
// bearer JWT is checked against its issuer's JWKS (jose: signature, issuer, expiry, and the
// audience, which must be this resource: RFC 8707 resource indicators) and its subject is the
// person of that identity, found as sign-in finds them (made on first use). A person signed in
// this way uses /mcp with their memberships' grants and roles, without an llmgw key.
import { createHash } from "node:crypto";
import { createRemoteJWKSet, decodeJwt, jwtVerify, type JWTPayload } from "jose";
import type { PrismaClient } from "../../common/db.ts";
import { log } from "../../common/logging.ts";
import type { LimitScope } from "../auth/limit-book.ts";
import type { IdentityProviders } from "../people/sign-in-settings.ts";
import { personForSignIn } from "../people/sign-in.ts";
import type { McpCaller } from "./caller-key.ts";

export const METADATA_PATH = "/.well-known/oauth-protected-resource";
const CACHE_MS = 30_000;
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** Whether a bearer credential is a JWT (an llmgw key never is). */
export const isJwt = (token: string) => JWT.test(token);

export class McpOAuth {
  private jwks = new Map<string, ReturnType<typeof createRemoteJWKSet>>();
  private cache = new Map<string, { caller: McpCaller; until: number }>();

  constructor(
    private readonly db: PrismaClient,
    private readonly providers: IdentityProviders,
    /** This resource's URL: the public URL's /mcp. */
    private readonly resource: () => URL,
  ) {}

  get enabled(): boolean {
    return this.providers.settings.oidc.length > 0;
  }

  /** Where the metadata is: the well-known path with the resource's own path after it (RFC 9728 §3.1). */
  metadataUrl(): string {
    const r = this.resource();
    return new URL(`${METADATA_PATH}${r.pathname === "/" ? "" : r.pathname}`, r).href;
  }

  /** The protected-resource metadata (RFC 9728 §2). */
  async metadata(): Promise<Record<string, unknown>> {
    const issuers = await Promise.all(this.providers.settings.oidc.map(async (e) => (await this.providers.oidc(e.name).catch(() => undefined))?.keys.issuer ?? e.issuer));
    return { resource: this.resource().href, authorization_servers: issuers, bearer_methods_supported: ["header"], scopes_supported: ["openid", "email", "profile"], resource_name: "llmgw MCP gateway" };
  }

  /** The caller a token is for, or why it is refused (the reason carries no part of the token). */
  async verify(token: string): Promise<McpCaller | string> {
    const id = createHash("sha256").update(token).digest("hex");
    const hit = this.cache.get(id);
    if (hit && hit.until > Date.now()) return hit.caller;
    let iss: string | undefined;
    try {
      iss = decodeJwt(token).iss;
    } catch {
      return "the bearer token is not a JWT";
    }
    let payload: JWTPayload | undefined;
    let provider: string | undefined;
    for (const e of this.providers.settings.oidc) {
      const p = await this.providers.oidc(e.name).catch((err: unknown) => void log.warn("identity provider not reached for an MCP token", { provider: e.name, error: (err as Error).message }));
      if (!p || p.keys.issuer !== iss || !p.keys.jwksUri) continue;
      let jwks = this.jwks.get(e.name);
      if (!jwks) this.jwks.set(e.name, (jwks = createRemoteJWKSet(new URL(p.keys.jwksUri))));
      try {
        ({ payload } = await jwtVerify(token, jwks, { issuer: p.keys.issuer, audience: this.resource().href, clockTolerance: e.clockToleranceS, requiredClaims: ["sub", "exp"] }));
      } catch (err) {
        return `the bearer token was refused: ${(err as Error).message}`;
      }
      provider = e.name;
      break;
    }
    if (!payload || !provider) return "the bearer token's issuer is none of the identity providers llmgw trusts";
    const caller = await this.callerOf(provider, payload);
    if (typeof caller === "string") return caller;
    this.cache.set(id, { caller, until: Math.min(Date.now() + CACHE_MS, payload.exp! * 1000) });
    if (this.cache.size > 10_000) for (const [k, v] of this.cache) if (v.until <= Date.now()) this.cache.delete(k);
    return caller;
  }

  /** The person of the token's subject, with their memberships as scopes and roles. */
  private async callerOf(provider: string, t: JWTPayload): Promise<McpCaller | string> {
    const email = typeof t.email === "string" ? t.email : null;
    const found = await personForSignIn(this.db, { provider, subject: t.sub!, email, name: typeof t.name === "string" ? t.name : null, groups: [] });
    if (found.disabled) return "this person is disabled";
    const memberships = await this.db.membership.findMany({ where: { personId: found.id }, orderBy: { id: "asc" } });
    const scopes = memberships.filter((m) => m.scopeId && ["org", "team", "project"].includes(m.scope)).map((m) => ({ scope: m.scope as LimitScope, scopeId: m.scopeId! }));
    // Jobs and files need a project: that of their first project membership.
    const projectId = scopes.find((s) => s.scope === "project")?.scopeId;
    const project = projectId ? await this.db.project.findUnique({ where: { id: projectId }, include: { team: true } }) : null;
    const teamId = project?.teamId ?? scopes.find((s) => s.scope === "team")?.scopeId ?? "";
    const orgId = project?.team.orgId ?? scopes.find((s) => s.scope === "org")?.scopeId ?? "";
    return {
      id: `person:${found.id}`,
      projectId: project?.id ?? "",
      teamId,
      orgId,
      models: [],
      band: "interactive",
      expiresAt: t.exp! * 1000,
      revoked: false,
      personId: found.id,
      signedIn: { personId: found.id, roles: [...new Set(memberships.map((m) => m.role))], scopes },
    };
  }
}
