// Who may call which admin route: one table keyed by the admin OpenAPI operations ("METHOD path",
// Express's path as gateway/admin-api/openapi.ts writes it). platform-admin may call every route;
// a route missing from this table is platform-admin only, so a new route is safe until someone
// decides who else may call it. tests/e2e/admin-roles.test.ts walks every operation with each role.
export const ROLES = ["platform-admin", "operator", "org-admin", "member", "viewer"] as const;
export type Role = (typeof ROLES)[number];

/** The scopes a role may be held at (a membership or a group mapping naming another is refused). */
export const ROLE_SCOPES: Record<Role, readonly string[]> = {
  "platform-admin": ["platform"],
  operator: ["platform"],
  "org-admin": ["org"],
  member: ["org", "team", "project"],
  viewer: ["platform", "org", "team", "project"],
};

/** Any signed-in person, whatever their roles: their own profile and keys. */
export const SIGNED_IN = "signed-in";
type Rule = readonly Role[] | typeof SIGNED_IN;

const V1 = "/api/v1";
const OPS: Role[] = ["operator"];
const READERS: Role[] = ["operator", "org-admin", "member", "viewer"];
/** org-admin's routes answer only for objects of their orgs (gateway/admin-api/scope.ts). */
const ORG: Role[] = ["org-admin"];

const rows: [string, Rule][] = [
  [`GET ${V1}/openapi.json`, [...READERS]],
  [`GET ${V1}/models`, READERS],
  [`GET ${V1}/models/:name`, READERS],
  [`POST ${V1}/models`, OPS],
  [`DELETE ${V1}/models/:name`, OPS],
  [`GET ${V1}/models/:name/placement`, OPS],
  // Prices are money: platform-admin only (left out).
  [`GET ${V1}/models/:name/settings`, OPS],
  [`PATCH ${V1}/models/:name/settings`, OPS],
  ...["serve", "scale", "stop", "upgrade", "canary"].map((a): [string, Rule] => [`POST ${V1}/models/:name/${a}`, OPS]),
  [`GET ${V1}/comfy-workflows`, OPS],
  [`GET ${V1}/comfy-workflows/:name`, OPS],
  [`POST ${V1}/comfy-workflows`, OPS],
  [`DELETE ${V1}/comfy-workflows/:name`, OPS],
  [`GET ${V1}/operations`, OPS],
  [`GET ${V1}/operations/*id`, OPS],
  [`POST ${V1}/operations/*id/:action`, OPS],
  [`GET ${V1}/nodes`, OPS],
  [`POST ${V1}/nodes/:id/cordon`, OPS],
  [`POST ${V1}/nodes/:id/uncordon`, OPS],
  [`DELETE ${V1}/nodes/:id`, OPS],
  [`POST ${V1}/nodes/:id/drain`, OPS],
  [`GET ${V1}/replicas/:id/logs`, OPS],
  // Tenancy: org-admin within their orgs; making an org is platform-admin's.
  [`GET ${V1}/orgs`, ORG],
  [`GET ${V1}/teams`, ORG],
  [`POST ${V1}/teams`, ORG],
  [`GET ${V1}/projects`, ORG],
  [`POST ${V1}/projects`, ORG],
  [`PATCH ${V1}/projects/:name/settings`, ORG],
  [`GET ${V1}/projects/:name/cache`, ORG],
  [`PUT ${V1}/projects/:name/cache`, ORG],
  [`DELETE ${V1}/projects/:name/cache`, ORG],
  [`GET ${V1}/keys/:id/cache`, ORG],
  [`PUT ${V1}/keys/:id/cache`, ORG],
  [`DELETE ${V1}/keys/:id/cache`, ORG],
  [`GET ${V1}/keys`, ORG],
  [`POST ${V1}/keys`, ORG],
  [`POST ${V1}/keys/:id/revoke`, ORG],
  [`POST ${V1}/keys/:id/rotate`, ORG],
  [`GET ${V1}/limits`, ORG],
  [`PUT ${V1}/limits/:scope/:name`, ORG],
  [`DELETE ${V1}/limits/:scope/:name`, ORG],
  [`GET ${V1}/usage`, ["org-admin", "viewer"]],
  [`GET ${V1}/slurm`, OPS],
  [`POST ${V1}/slurm/nodes/:id/lend`, OPS],
  [`POST ${V1}/slurm/nodes/:id/reclaim`, OPS],
  [`POST ${V1}/training`, OPS],
  [`GET ${V1}/training`, OPS],
  [`GET ${V1}/training/:id`, OPS],
  [`POST ${V1}/training/:id/cancel`, OPS],
  [`GET ${V1}/training/:id/artifact`, OPS],
  [`POST ${V1}/training/:id/publish`, OPS],
  [`GET ${V1}/adapters`, OPS],
  [`POST ${V1}/explain`, OPS],
  [`GET ${V1}/notifications`, OPS],
  [`POST ${V1}/notifications/test`, OPS],
  // The person's own profile and keys.
  [`GET ${V1}/me`, SIGNED_IN],
  [`GET ${V1}/me/keys`, SIGNED_IN],
  [`POST ${V1}/me/keys`, SIGNED_IN],
  [`DELETE ${V1}/me/keys/:id`, SIGNED_IN],
  // People: org-admin sees those holding a role in their orgs and grants or removes roles there
  // (gateway/admin-api/people.ts); making, disabling and deleting people is platform-admin's.
  [`GET ${V1}/people`, ORG],
  [`GET ${V1}/people/:id`, ORG],
  [`POST ${V1}/people/:id/memberships`, ORG],
  [`DELETE ${V1}/people/:id/memberships/:membershipId`, ORG],
  // Audit, prices, guardrails, the rest of people, and group mappings: platform-admin only (left out).
];

export const ROUTE_ROLES: ReadonlyMap<string, Rule> = new Map(rows);

export const operationKey = (method: string, path: string): string => `${method.toUpperCase()} ${path}`;

/** Whether a principal holding `roles` may call the operation; platform-admin may call all but a person's own routes. */
export function allowed(key: string, roles: ReadonlySet<Role>, isPerson: boolean): boolean {
  const rule = ROUTE_ROLES.get(key);
  // The admin token is no person: it has no profile or keys of its own.
  if (rule === SIGNED_IN) return isPerson;
  if (roles.has("platform-admin")) return true;
  return !!rule && rule.some((r) => roles.has(r));
}

/** What a 403 says: the roles that would do. */
export function rolesNeeded(key: string): string {
  const rule = ROUTE_ROLES.get(key);
  if (rule === SIGNED_IN) return "a signed-in person (not the admin token)";
  return ["platform-admin", ...(rule ?? [])].join(" or ");
}
