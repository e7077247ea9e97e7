// Who is calling the admin API. The admin token is the break-glass platform-admin (admin port only,
// logged as such with the method and route, never the token). A person comes with a session: the
// bearer `llmgw-sess-…` that `ctl login` keeps, or the console's `llmgw_session` cookie, whose
// state-changing requests must echo the session's CSRF value in x-csrf-token. A disabled or
// deleted person's session is refused. Their roles come from their Membership rows.
import { AsyncLocalStorage } from "node:async_hooks";
import { timingSafeEqual } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import type { PrismaClient } from "../../common/db.ts";
import { log } from "../../common/logging.ts";
import { csrfMatches, SESSION_COOKIE, SESSION_TOKEN_PREFIX, type Session, type SessionStore } from "../people/sessions.ts";
import { AdminError } from "./errors.ts";
import { ROLES, type Role } from "./roles.ts";

export interface MembershipRow {
  id: string;
  scope: string;
  scopeId: string | null;
  role: string;
  source: string;
}

export type Principal =
  | { kind: "admin-token"; roles: ReadonlySet<Role> }
  | { kind: "person"; person: { id: string; name: string; email: string | null }; memberships: MembershipRow[]; roles: ReadonlySet<Role>; session: Session; sessionToken: string };

/** Who made a change, for the audit log (gateway/admin-api/audit.ts reads it). */
export interface Actor {
  actor: string;
  personId: string | null;
}
export const actorContext = new AsyncLocalStorage<Actor>();

const principals = new WeakMap<Request, Principal>();

/** The principal the middleware found; a route behind it always has one. */
export function principalOf(req: Request): Principal {
  const p = principals.get(req);
  if (!p) throw new AdminError(401, "not signed in");
  return p;
}

export const actorOf = (p: Principal): Actor => (p.kind === "admin-token" ? { actor: "admin-token", personId: null } : { actor: `person:${p.person.id}`, personId: p.person.id });

const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** One cookie's value from a Cookie header; names are matched exactly. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

function tokenMatches(got: string, want: string): boolean {
  const a = Buffer.from(got);
  const b = Buffer.from(want);
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface PrincipalOptions {
  db: PrismaClient;
  sessions: SessionStore;
  /** null: the admin token is refused here (the admin API on the client port). */
  adminToken: string | null;
}

/** Loads a person's roles; null when the person is gone or disabled. */
async function personPrincipal(db: PrismaClient, session: Session, sessionToken: string): Promise<Principal | null> {
  const person = await db.person.findUnique({ where: { id: session.personId }, include: { memberships: true } });
  if (!person || person.disabled) return null;
  const roles = new Set(person.memberships.map((m) => m.role).filter((r): r is Role => (ROLES as readonly string[]).includes(r)));
  const memberships = person.memberships.map((m) => ({ id: m.id, scope: m.scope, scopeId: m.scopeId, role: m.role, source: m.source }));
  return { kind: "person", person: { id: person.id, name: person.name, email: person.email }, memberships, roles, session, sessionToken };
}

export function principalMiddleware(o: PrincipalOptions) {
  const refused = o.adminToken === null ? "missing or unknown session: sign in (llmgw ctl login, or the console)" : "missing or wrong admin token";
  return (req: Request, _res: Response, next: NextFunction): void => {
    void (async () => {
      const auth = req.headers.authorization ?? "";
      const bearer = auth.toLowerCase().startsWith("bearer ") ? auth.slice(7).trim() : undefined;
      let token = bearer;
      let viaCookie = false;
      if (bearer === undefined) {
        token = cookieValue(req.headers.cookie, SESSION_COOKIE);
        viaCookie = token !== undefined;
      }
      if (!token) throw new AdminError(401, refused);
      if (!token.startsWith(SESSION_TOKEN_PREFIX)) {
        if (o.adminToken === null || viaCookie || !tokenMatches(auth, `Bearer ${o.adminToken}`)) throw new AdminError(401, refused);
        // Break-glass: every use is logged, with what it did (the token never).
        log.info("admin token used (break-glass platform-admin)", { method: req.method, route: req.baseUrl + req.path });
        principals.set(req, { kind: "admin-token", roles: new Set<Role>(["platform-admin"]) });
        return;
      }
      const session = await o.sessions.get(token);
      if (!session) throw new AdminError(401, "the session has ended or is unknown: sign in again");
      const p = await personPrincipal(o.db, session, token);
      if (!p) throw new AdminError(401, "this person is disabled or removed: their sessions have ended");
      // The cookie rides along on any request the browser makes: a state change must prove it came from our page.
      if (viaCookie && STATE_CHANGING.has(req.method) && !csrfMatches(session, req.headers["x-csrf-token"] as string | undefined)) {
        throw new AdminError(403, "missing or wrong x-csrf-token: send the llmgw_csrf cookie's value with a cookie session's changes", "x-csrf-token");
      }
      principals.set(req, p);
    })().then(() => next(), next);
  };
}

/** Runs the rest of the request as its principal, so audit rows name them. After the body parser (whose stream events would lose the context). */
export function actorScope(req: Request, _res: Response, next: NextFunction): void {
  const p = principals.get(req);
  if (!p) return next();
  actorContext.run(actorOf(p), next);
}
