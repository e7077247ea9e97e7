// Memberships and group mappings name their scope the way people know it (an org or project by
// name, a team as ORG/TEAM); the store keeps the id. Both bodies are checked here the same way:
// the role must be one that scope can hold (gateway/admin-api/roles.ts's ROLE_SCOPES).
import { z } from "zod";
import type { PrismaClient } from "../../common/db.ts";
import { AdminError } from "./errors.ts";
import { ROLE_SCOPES, ROLES } from "./roles.ts";

export const SCOPES = ["platform", "org", "team", "project"] as const;

const grantShape = {
  scope: z.enum(SCOPES),
  name: z.string().min(1).max(200).optional().describe("the org, ORG/TEAM or project; left out for platform"),
  role: z.enum(ROLES),
};

/** Refines a body holding scope, name and role: a name for every scope but platform, a role the scope may hold. */
const grantRules = (b: { scope: string; name?: string | undefined; role: (typeof ROLES)[number] }, ctx: z.RefinementCtx) => {
  if (b.scope === "platform" && b.name !== undefined) ctx.addIssue({ code: "custom", path: ["name"], message: "a platform membership names nothing: leave name out" });
  if (b.scope !== "platform" && b.name === undefined) ctx.addIssue({ code: "custom", path: ["name"], message: `name the ${b.scope}${b.scope === "team" ? " as ORG/TEAM" : ""}` });
  if (!ROLE_SCOPES[b.role].includes(b.scope)) ctx.addIssue({ code: "custom", path: ["role"], message: `${b.role} is held at ${ROLE_SCOPES[b.role].join(" or ")} scope, not ${b.scope}` });
};

export const membershipBody = z.object(grantShape).strict().superRefine(grantRules);
export const groupMappingBody = z
  .object({ provider: z.string().min(1).max(100).nullable().optional().describe("the identity provider whose groups it maps (oidc:NAME, ldap, scim); null or left out: every one"), group: z.string().min(1).max(256), ...grantShape })
  .strict()
  .superRefine(grantRules);

/** The id a scope's name stands for; a 404 names what was not found. */
export async function scopeIdOf(db: PrismaClient, scope: string, name: string | undefined): Promise<string | null> {
  if (scope === "platform" || name === undefined) return null;
  if (scope === "org") {
    const o = await db.org.findUnique({ where: { name } });
    if (!o) throw new AdminError(404, `no org '${name}'`, "name");
    return o.id;
  }
  if (scope === "team") {
    const [org, team] = name.split("/", 2);
    const t = team ? await db.team.findFirst({ where: { name: team, org: { name: org } } }) : null;
    if (!t) throw new AdminError(404, `no team '${name}' (name a team as ORG/TEAM)`, "name");
    return t.id;
  }
  const p = await db.project.findUnique({ where: { name } });
  if (!p) throw new AdminError(404, `no project '${name}'`, "name");
  return p.id;
}

/** Names for scope ids (a removed org, team or project shows its id). */
export async function scopeNames(db: PrismaClient, rows: { scope: string; scopeId: string | null }[]): Promise<Map<string, string>> {
  const ids = (s: string) => rows.filter((r) => r.scope === s && r.scopeId).map((r) => r.scopeId!);
  const [orgs, teams, projects] = await Promise.all([
    db.org.findMany({ where: { id: { in: ids("org") } } }),
    db.team.findMany({ where: { id: { in: ids("team") } }, include: { org: true } }),
    db.project.findMany({ where: { id: { in: ids("project") } } }),
  ]);
  return new Map([...orgs.map((o) => [o.id, o.name] as const), ...teams.map((t) => [t.id, `${t.org.name}/${t.name}`] as const), ...projects.map((p) => [p.id, p.name] as const)]);
}

type Grant = { id: string; scope: string; scopeId: string | null; role: string };
export const grantView = <T extends Grant>(m: T, names: Map<string, string>) => ({ ...m, name: m.scopeId ? (names.get(m.scopeId) ?? m.scopeId) : null });
