// Ends what a person can do, everywhere within seconds: every gateway's key cache drops their keys
// (through the change feed) and their sessions are deleted. Called when a person is disabled,
// deprovisioned (SCIM), deleted, or leaves a project (their keys of that project then fail the
// key cache's membership check on the next lookup).
import type { Redis } from "ioredis";
import { publishChange } from "../../common/change-feed.ts";
import type { PrismaClient } from "../../common/db.ts";
import { SessionStore } from "./sessions.ts";

export async function endPersonAccess(db: PrismaClient, redis: Redis, personId: string, opts: { sessions?: boolean } = {}): Promise<void> {
  const keys = await db.apiKey.findMany({ where: { personId }, select: { hash: true } });
  for (const k of keys) await publishChange(redis, { kind: "key", op: "changed", hash: k.hash });
  if (opts.sessions !== false) await new SessionStore(redis).revokePerson(personId);
}
