// What part of the tenancy tree a principal's roles reach. platform-admin (and the admin token) and
// a platform-wide membership of the roles asked reach everything; an org membership reaches the org,
// its teams and their projects; a team one its projects; a project one that project. Routes that
// org-admins and viewers may call filter their lists by it and refuse objects outside it.
import type { Request } from "express";
import type { PrismaClient } from "../../common/db.ts";
import { AdminError } from "./errors.ts";
import { principalOf, type MembershipRow, type Principal } from "./principal.ts";
import type { Role } from "./roles.ts";

export interface Reach {
  all: boolean;
  orgIds: Set<string>;
  teamIds: Set<string>;
  projectIds: Set<string>;
}

const EVERYTHING: Reach = { all: true, orgIds: new Set(), teamIds: new Set(), projectIds: new Set() };

/** The reach of the memberships in `memberships` whose role is one of `roles`. */
export async function reachOfMemberships(db: PrismaClient, memberships: MembershipRow[], roles: readonly Role[]): Promise<Reach> {
  const ms = memberships.filter((m) => (roles as readonly string[]).includes(m.role));
  if (ms.some((m) => m.scope === "platform")) return EVERYTHING;
  const ids = (scope: string) => ms.filter((m) => m.scope === scope && m.scopeId).map((m) => m.scopeId!);
  const orgIds = new Set(ids("org"));
  const teams = await db.team.findMany({ where: { OR: [{ orgId: { in: [...orgIds] } }, { id: { in: ids("team") } }] }, select: { id: true } });
  const teamIds = new Set(teams.map((t) => t.id));
  const projects = await db.project.findMany({ where: { OR: [{ teamId: { in: [...teamIds] } }, { id: { in: ids("project") } }] }, select: { id: true } });
  return { all: false, orgIds, teamIds, projectIds: new Set(projects.map((p) => p.id)) };
}

export async function reachOf(db: PrismaClient, p: Principal, roles: readonly Role[]): Promise<Reach> {
  if (p.roles.has("platform-admin")) return EVERYTHING;
  if (p.kind === "admin-token") return EVERYTHING;
  return reachOfMemberships(db, p.memberships, roles);
}

/** The reach of the caller on the tenancy routes (org-admin's). */
export const tenancyReach = (db: PrismaClient, req: Request): Promise<Reach> => reachOf(db, principalOf(req), ["org-admin"]);
/** The reach of the caller on the usage report (org-admin's and viewer's). */
export const usageReach = (db: PrismaClient, req: Request): Promise<Reach> => reachOf(db, principalOf(req), ["org-admin", "viewer"]);

/** A Prisma `where` on an id column: everything, or the ids reached. */
export const within = (all: boolean, ids: Set<string>) => (all ? {} : { in: [...ids] });

/** Whether a membership's scope is inside the reach (a platform-wide one is only inside everything). */
export function reachesScope(reach: Reach, scope: string, scopeId: string | null): boolean {
  if (reach.all) return true;
  if (!scopeId) return false;
  return scope === "org" ? reach.orgIds.has(scopeId) : scope === "team" ? reach.teamIds.has(scopeId) : scope === "project" ? reach.projectIds.has(scopeId) : false;
}

/** A Prisma `where` on memberships: those inside the reach. */
export const membershipsWithin = (reach: Reach) =>
  reach.all
    ? {}
    : { OR: [{ scope: "org", scopeId: { in: [...reach.orgIds] } }, { scope: "team", scopeId: { in: [...reach.teamIds] } }, { scope: "project", scopeId: { in: [...reach.projectIds] } }] };

/** Refuses an object outside the caller's orgs, without saying whether it exists. */
export function mustReach(reach: Reach, kind: "org" | "team" | "project", id: string | null | undefined, name: string, field: string): void {
  if (reach.all) return;
  const set = kind === "org" ? reach.orgIds : kind === "team" ? reach.teamIds : reach.projectIds;
  if (!id || !set.has(id)) throw new AdminError(404, `no ${kind} '${name}' in the orgs you administer`, field);
}
