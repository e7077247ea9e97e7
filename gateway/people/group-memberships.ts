// The directory decides who belongs where: a person's groups, as one identity provider names them
// (an ID token's groups claim, LDAP's memberOf, SCIM's Groups), become memberships through the
// rules in group_mappings. Memberships a provider gave carry it as their `source`, so a new sign-in
// or a SCIM change replaces exactly those and never touches what an administrator set by hand.
import { randomUUID } from "node:crypto";
import type { PrismaClient } from "../../common/db.ts";

export interface MembershipGrant {
  scope: string;
  scopeId: string | null;
  role: string;
}

/** The memberships the rules give for these groups from this provider (rules with no provider apply to every one). */
export async function membershipsForGroups(db: PrismaClient, provider: string, groups: string[]): Promise<MembershipGrant[]> {
  if (groups.length === 0) return [];
  const rules = await db.groupMapping.findMany({ where: { group: { in: groups }, OR: [{ provider }, { provider: null }] } });
  const seen = new Set<string>();
  const out: MembershipGrant[] = [];
  for (const r of rules) {
    const k = `${r.scope}\u0000${r.scopeId ?? ""}\u0000${r.role}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push({ scope: r.scope, scopeId: r.scopeId, role: r.role });
  }
  return out;
}

/**
 * Makes the person's memberships from `source` exactly what their groups give now. Returns whether
 * anything changed, so the caller can end access the person lost (gateway/people/end-access.ts).
 */
export async function syncGroupMemberships(db: PrismaClient, personId: string, source: string, groups: string[]): Promise<boolean> {
  const want = await membershipsForGroups(db, source, groups);
  return db.$transaction(async (tx) => {
    const have = await tx.membership.findMany({ where: { personId, source } });
    const key = (m: MembershipGrant) => `${m.scope}\u0000${m.scopeId ?? ""}\u0000${m.role}`;
    const wantKeys = new Set(want.map(key));
    const haveKeys = new Set(have.map(key));
    const gone = have.filter((m) => !wantKeys.has(key(m)));
    const added = want.filter((m) => !haveKeys.has(key(m)));
    if (gone.length) await tx.membership.deleteMany({ where: { id: { in: gone.map((m) => m.id) } } });
    for (const m of added) await tx.membership.create({ data: { id: randomUUID(), personId, source, ...m } });
    const changed = gone.length > 0 || added.length > 0;
    // The provider's word, applied at the person's own sign-in: the audit row names them.
    if (changed) {
      const shown = (m: MembershipGrant) => ({ scope: m.scope, scopeId: m.scopeId, role: m.role });
      await tx.auditEvent.create({
        data: { id: randomUUID(), actor: `person:${personId}`, personId, action: "membership.sync", target: `person/${personId}`, before: { source, removed: gone.map(shown) }, after: { source, added: added.map(shown) } },
      });
    }
    return changed;
  });
}
