// The people, memberships, group mappings and /me routes of the admin OpenAPI document
// (gateway/admin-api/openapi.ts puts them with the rest). Who may call each: gateway/admin-api/roles.ts.
import { z } from "zod";
import type { Operation } from "../http/openapi-build.ts";
import { groupMappingId } from "./group-mappings.ts";
import { myKeyBody } from "./me.ts";
import { adminError, deleted } from "./openapi-responses.ts";
import { membershipPath, personBody, personIdPath } from "./people.ts";
import { groupMappingBody, membershipBody } from "./people-scopes.ts";
import { keyId } from "./tenancy.ts";

const V1 = "/api/v1";
const time = z.string().describe("ISO time");
const ok = (description: string, schema: z.ZodType) => ({ "200": { description, schema } });
const created = (description: string, schema: z.ZodType, conflict?: string) => ({ "201": { description, schema }, ...(conflict ? { "409": { description: conflict, schema: adminError } } : {}) });

const person = z.looseObject({ id: z.string(), name: z.string(), email: z.string().nullable(), disabled: z.boolean(), createdAt: time });
const grant = z.looseObject({ id: z.string(), scope: z.string(), scopeId: z.string().nullable(), name: z.string().nullable().describe("the org, ORG/TEAM or project"), role: z.string() });
const membership = grant.extend({ source: z.string().describe("manual, or the identity provider whose groups gave it") });
const mapping = grant.extend({ provider: z.string().nullable(), group: z.string() });
const myKey = z.looseObject({ id: z.string(), prefix: z.string(), name: z.string().nullable(), project: z.string(), models: z.array(z.string()), band: z.string(), expiresAt: time.nullable(), revoked: z.boolean() });
const list = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item) });

export const peopleNamed = { PersonRequest: personBody, MembershipRequest: membershipBody, GroupMappingRequest: groupMappingBody, MyKeyRequest: myKeyBody };

export const peopleOperations: Operation[] = [
  { method: "get", path: `${V1}/me`, summary: "The signed-in person: who, their memberships and roles, the session's CSRF value", tag: "people", responses: ok("You", z.object({ person: z.looseObject({ id: z.string(), name: z.string(), email: z.string().nullable() }), memberships: z.array(membership), roles: z.array(z.string()), csrf: z.string() })) },
  { method: "get", path: `${V1}/me/keys`, summary: "Your own API keys, never their secrets", tag: "people", responses: ok("Your keys", list(myKey)) },
  { method: "post", path: `${V1}/me/keys`, summary: "A key of your own in one of your projects: it ends when you are disabled or leave the project", tag: "people", request: myKeyBody, responses: { ...created("Created: the key is in this answer only", myKey.extend({ key: z.string() })), "403": { description: "You hold no role in that project that makes keys", schema: adminError } } },
  { method: "delete", path: `${V1}/me/keys/:id`, summary: "Revoke one of your keys, on every gateway", tag: "people", params: keyId, responses: ok("Revoked", myKey) },

  { method: "get", path: `${V1}/people`, summary: "People", tag: "people", responses: ok("The people", list(person.extend({ memberships: z.number().int(), keys: z.number().int() }))) },
  { method: "get", path: `${V1}/people/:id`, summary: "One person, with memberships and identities at providers", tag: "people", params: personIdPath, responses: ok("The person", person.extend({ memberships: z.array(membership), identities: z.array(z.object({ provider: z.string(), subject: z.string() })) })) },
  { method: "post", path: `${V1}/people`, summary: "Add a person (people signing in are added by their identity provider)", tag: "people", request: personBody, responses: created("Created", person, "A person with that email exists") },
  { method: "post", path: `${V1}/people/:id/disable`, summary: "Disable a person: their sessions end and their keys stop on every gateway", tag: "people", params: personIdPath, responses: ok("Disabled", person) },
  { method: "post", path: `${V1}/people/:id/enable`, summary: "Enable a disabled person", tag: "people", params: personIdPath, responses: ok("Enabled", person) },
  { method: "delete", path: `${V1}/people/:id`, summary: "Delete a person, their memberships and keys; their sessions end", tag: "people", params: personIdPath, responses: ok("Deleted", deleted) },
  { method: "post", path: `${V1}/people/:id/memberships`, summary: "Give a person a role at the platform, an org, a team or a project", tag: "people", params: personIdPath, request: membershipBody, responses: created("Added", membership, "The person holds that role there already") },
  { method: "delete", path: `${V1}/people/:id/memberships/:membershipId`, summary: "Take a membership away: keys it granted stop on every gateway", tag: "people", params: membershipPath, responses: ok("Removed", deleted) },

  { method: "get", path: `${V1}/group-mappings`, summary: "Rules turning directory groups into memberships", tag: "people", responses: ok("The rules", list(mapping)) },
  { method: "get", path: `${V1}/group-mappings/:id`, summary: "One rule", tag: "people", params: groupMappingId, responses: ok("The rule", mapping) },
  { method: "post", path: `${V1}/group-mappings`, summary: "Add a rule: people in GROUP (from PROVIDER, or any) get ROLE at a scope", tag: "people", request: groupMappingBody, responses: created("Added", mapping, "The rule exists") },
  { method: "put", path: `${V1}/group-mappings/:id`, summary: "Replace a rule", tag: "people", params: groupMappingId, request: groupMappingBody, responses: { ...ok("The rule now", mapping), "409": { description: "Another rule says the same", schema: adminError } } },
  { method: "delete", path: `${V1}/group-mappings/:id`, summary: "Remove a rule (memberships it gave change at the person's next sign-in or SCIM change)", tag: "people", params: groupMappingId, responses: ok("Removed", deleted) },
];
