// What a SCIM change does beyond the rows it writes: an audit row (actor `scim`), the memberships a
// person's directory groups give (through the group mapping rules), and the end of access a
// disabled, removed or narrowed person had — keys dropped from every gateway's cache in seconds.
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { publishChange } from "../../common/change-feed.ts";
import { Prisma, type PrismaClient } from "../../common/db.ts";
import { endPersonAccess } from "../people/end-access.ts";
import { syncGroupMemberships } from "../people/group-memberships.ts";
import { SessionStore } from "../people/sessions.ts";

export const SCIM_ACTOR = "scim";
/** The provider SCIM's identities and memberships carry (PersonIdentity.provider, Membership.source). */
export const SCIM_PROVIDER = "scim";

export interface ScimDeps {
  db: PrismaClient;
  redis: Redis;
}

const asJson = (v: unknown) => (v === undefined || v === null ? Prisma.DbNull : (JSON.parse(JSON.stringify(v)) as Prisma.InputJsonValue));

export async function auditScim(db: PrismaClient, action: string, target: string, before?: unknown, after?: unknown): Promise<void> {
  await db.auditEvent.create({ data: { id: randomUUID(), actor: SCIM_ACTOR, action, target, before: asJson(before), after: asJson(after) } });
}

/**
 * Recomputes the memberships SCIM's groups give each person; a person whose memberships changed has
 * their keys re-checked everywhere (their sessions read roles afresh on each request, so they stay).
 */
export async function resyncPeople(deps: ScimDeps, personIds: Iterable<string>): Promise<void> {
  for (const personId of new Set(personIds)) {
    const rows = await deps.db.directoryGroupMember.findMany({ where: { personId }, select: { group: { select: { displayName: true } } } });
    const changed = await syncGroupMemberships(deps.db, personId, SCIM_PROVIDER, rows.map((r) => r.group.displayName));
    if (changed) await recheckKeys(deps, personId);
  }
}

/** Every gateway looks the person's keys up again (their grants changed); sessions stay. */
export async function recheckKeys(deps: ScimDeps, personId: string): Promise<void> {
  await endPersonAccess(deps.db, deps.redis, personId, { sessions: false });
}

/** A person just disabled: keys and sessions end. */
export async function endDisabled(deps: ScimDeps, personId: string): Promise<void> {
  await endPersonAccess(deps.db, deps.redis, personId);
}

/**
 * Removes a person and ends what they could do. Their keys go with the row (cascade), so the hashes
 * are read first and every gateway told after the delete, when a reload can no longer find them.
 */
export async function removePerson(deps: ScimDeps, personId: string): Promise<void> {
  const keys = await deps.db.apiKey.findMany({ where: { personId }, select: { hash: true } });
  await deps.db.person.delete({ where: { id: personId } });
  for (const k of keys) await publishChange(deps.redis, { kind: "key", op: "changed", hash: k.hash });
  await new SessionStore(deps.redis).revokePerson(personId);
}
