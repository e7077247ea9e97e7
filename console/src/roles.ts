// Which pages and forms a person's roles open. The admin API decides (a 403 otherwise); this only
// hides what would be refused, so nobody is shown a form they may not use.

export type Role = "platform-admin" | "operator" | "org-admin" | "member" | "viewer";

export interface Membership {
  scope: "platform" | "org" | "team" | "project";
  scopeId: string | null;
  role: Role;
  /** The scope's name when the API gives it. */
  name?: string | null;
}

export interface Me {
  person: { id: string; name: string | null; email: string | null };
  memberships: Membership[];
  roles: Role[];
  csrf?: string;
}

export type Capability =
  | "models.read" // overview and models
  | "nodes.read"
  | "fleet.write" // serve, scale, stop, cordon, drain, operations
  | "notifications.read"
  | "usage.read"
  | "tenancy.read"
  | "tenancy.write" // projects and keys of a tenancy
  | "limits.write" // limits and budgets of teams, projects and keys (an org's own: platform-admin)
  | "people.write" // people's memberships and roles (org-admin: within their orgs)
  | "admin"; // guardrails, MCP servers and the audit log

// As the admin API's role table has it (gateway/admin-api/roles.ts): platform-admin may do everything.
const GRANTS: Record<Role, Capability[]> = {
  "platform-admin": ["models.read", "nodes.read", "fleet.write", "notifications.read", "usage.read", "tenancy.read", "tenancy.write", "limits.write", "people.write", "admin"],
  operator: ["models.read", "nodes.read", "fleet.write", "notifications.read"],
  "org-admin": ["models.read", "usage.read", "tenancy.read", "tenancy.write", "limits.write", "people.write"],
  viewer: ["models.read", "usage.read"],
  member: ["models.read"],
};

/** The roles a person holds anywhere: /me's roles, and the memberships' in case an API gives only those. */
export function rolesOf(me: Me): Set<Role> {
  return new Set<Role>([...(me.roles ?? []), ...(me.memberships ?? []).map((m) => m.role)]);
}

export function can(me: Me | null, cap: Capability): boolean {
  if (!me) return false;
  for (const r of rolesOf(me)) if (GRANTS[r]?.includes(cap)) return true;
  return false;
}
