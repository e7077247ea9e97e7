// A person's own key works in a project while the person holds a role there that may make keys:
// member, org-admin or platform-admin, at the project, its team, its org or the whole platform.
// The key cache (./key-cache.ts) and POST /me/keys ask the same question.
export const KEY_ROLES: readonly string[] = ["member", "org-admin", "platform-admin"];

export interface Grant {
  scope: string;
  scopeId: string | null;
  role: string;
}

export interface ProjectPlace {
  projectId: string;
  teamId: string;
  orgId: string;
}

export function grantsProject(memberships: readonly Grant[], at: ProjectPlace): boolean {
  return memberships.some(
    (m) =>
      KEY_ROLES.includes(m.role) &&
      (m.scope === "platform" || (m.scope === "org" && m.scopeId === at.orgId) || (m.scope === "team" && m.scopeId === at.teamId) || (m.scope === "project" && m.scopeId === at.projectId)),
  );
}
