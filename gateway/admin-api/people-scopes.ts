// Memberships and group mappings name their scope the way people know it (an org or project by
// name, a team as ORG/TEAM); the store keeps the id. Both bodies are checked here the same way:
// the role must be one that scope can hold (gateway/admin-api/roles.ts's ROLE_SCOPES). One variant
// per scope, so the OpenAPI document says exactly what is accepted (a platform grant names nothing).
import { z } from "zod";
import type { PrismaClient } from "../../common/db.ts";
import { AdminError } from "./errors.ts";
import { ROLE_SCOPES, ROLES } from "./roles.ts";

export const SCOPES = ["platform", "org", "team", "project"] as const;

const rolesAt = (scope: string) => ROLES.filter((r) => ROLE_SCOPES[r].includes(scope)) as [(typeof ROLES)[number], ...(typeof ROLES)[number][]];
const NAMES = { org: "the org", team: "the team, as ORG/TEAM", project: "the project" } as const;

/** One strict object per scope: its name (none for platform) and the roles it can hold. */
function grantVariants<T extends z.ZodRawShape>(extra: T) {
  return SCOPES.map((scope) =>
    z.strictObject(
      {
        ...extra,
        scope: z.literal(scope),
        ...(scope === "platform" ? {} : { name: z.string({ error: `name ${NAMES[scope]}` }).min(1).max(200).describe(NAMES[scope]) }),
        role: z.enum(rolesAt(scope), { error: `at ${scope} scope the role is one of ${rolesAt(scope).join(", ")}` }),
      },
      { error: (iss) => (iss.code === "unrecognized_keys" ? `unknown field${iss.keys.length > 1 ? "s" : ""} ${iss.keys.join(", ")}${scope === "platform" && iss.keys.includes("name") ? " (a platform grant names nothing)" : ""}` : undefined) },
    ),
  );
}

const scopeError = { error: `one of ${SCOPES.join(", ")}` };
export const membershipBody = z.discriminatedUnion("scope", grantVariants({}) as never as [z.ZodObject, ...z.ZodObject[]], scopeError) as unknown as z.ZodType<{ scope: (typeof SCOPES)[number]; name?: string; role: (typeof ROLES)[number] }>;
export const groupMappingBody = z.discriminatedUnion(
  "scope",
  grantVariants({
    provider: z.string().min(1).max(100).nullable().optional().describe("the identity provider whose groups it maps (oidc:NAME, ldap, scim); null or left out: every one"),
    group: z.string().min(1).max(256),
  }) as never as [z.ZodObject, ...z.ZodObject[]],
  scopeError,
) as unknown as z.ZodType<{ scope: (typeof SCOPES)[number]; name?: string; role: (typeof ROLES)[number]; provider?: string | null; group: string }>;

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
