// What every sign-in ends with, whichever provider vouched for the person: the person found by
// their id at that provider, else by email (someone an administrator or SCIM made first), else
// made now; a disabled person refused; their groups made into memberships by the mapping rules;
// and a session. The token is returned to the caller once and never logged.
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { Prisma, type PrismaClient } from "../../common/db.ts";
import { log } from "../../common/logging.ts";
import { endPersonAccess } from "./end-access.ts";
import { syncGroupMemberships } from "./group-memberships.ts";
import type { Session, SessionStore } from "./sessions.ts";

/** Who a provider says signed in. `provider` is the provider's name: PersonIdentity.provider and Membership.source. */
export interface SignedIn {
  provider: string;
  subject: string;
  email: string | null;
  name: string | null;
  groups: string[];
}

/** The person exists and is disabled: no sign-in. */
export class PersonDisabled extends Error {
  constructor() {
    super("this account is disabled");
  }
}

export interface SignInDeps {
  db: PrismaClient;
  redis: Redis;
  sessions: SessionStore;
}

interface FoundPerson {
  id: string;
  disabled: boolean;
  created: boolean;
}

async function findOrCreate(db: PrismaClient, who: SignedIn): Promise<FoundPerson> {
  const known = await db.personIdentity.findUnique({ where: { provider_subject: { provider: who.provider, subject: who.subject } }, include: { person: true } });
  if (known) return { id: known.person.id, disabled: known.person.disabled, created: false };
  const email = who.email?.trim().toLowerCase() || null;
  const byEmail = email ? await db.person.findUnique({ where: { email } }) : null;
  if (byEmail) {
    // Someone made before (by an administrator or SCIM) signs in for the first time at this provider.
    if (!byEmail.disabled) await db.personIdentity.create({ data: { id: randomUUID(), provider: who.provider, subject: who.subject, personId: byEmail.id } });
    return { id: byEmail.id, disabled: byEmail.disabled, created: false };
  }
  const id = randomUUID();
  await db.person.create({ data: { id, name: who.name?.trim() || email || who.subject, email, identities: { create: { id: randomUUID(), provider: who.provider, subject: who.subject } } } });
  await db.auditEvent.create({ data: { id: randomUUID(), actor: `person:${id}`, personId: id, action: "person.create", target: `person/${id}`, after: { name: who.name, email, via: who.provider } } });
  return { id, disabled: false, created: true };
}

/** The person a sign-in is for; two first sign-ins at once make one person, the second finding the first's. */
export async function personForSignIn(db: PrismaClient, who: SignedIn): Promise<FoundPerson> {
  try {
    return await findOrCreate(db, who);
  } catch (err) {
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002") return findOrCreate(db, who);
    throw err;
  }
}

/** Signs the person in: a session for them, or PersonDisabled. `via` names the way in on the session (`oidc:<name>`, `ldap`). */
export async function completeSignIn(deps: SignInDeps, who: SignedIn, via: string): Promise<{ token: string; session: Session; personId: string }> {
  const person = await personForSignIn(deps.db, who);
  if (person.disabled) {
    log.warn("sign-in refused: the person is disabled", { person: person.id, via });
    throw new PersonDisabled();
  }
  // The groups decide memberships from this provider; access a lost membership gave ends now.
  if (await syncGroupMemberships(deps.db, person.id, who.provider, who.groups)) await endPersonAccess(deps.db, deps.redis, person.id, { sessions: false });
  const { token, session } = await deps.sessions.create(person.id, via);
  log.info("signed in", { person: person.id, via, created: person.created, groups: who.groups.length });
  return { token, session, personId: person.id };
}
