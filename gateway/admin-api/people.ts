// People and their memberships: list, show, create, disable, enable, delete (platform-admin's),
// and the roles they hold where. An org-admin sees the people holding a role inside their orgs
// (and only those roles), and grants or removes roles inside their orgs; anything outside is a 404,
// as if it did not exist. They may grant a role to any person whose id they are given. Disabling or deleting a person, or removing one of their
// memberships, ends what they lose at once: every gateway drops their keys (the key cache checks
// the person again on its next lookup) and a disabled or deleted person's sessions end.
import { randomUUID } from "node:crypto";
import { Router } from "express";
import type { Redis } from "ioredis";
import { z } from "zod";
import { Prisma, type PrismaClient } from "../../common/db.ts";
import { endPersonAccess } from "../people/end-access.ts";
import { audit } from "./audit.ts";
import { AdminError, check } from "./errors.ts";
import { grantView, membershipBody, scopeIdOf, scopeNames } from "./people-scopes.ts";
import { membershipsWithin, reachesScope, tenancyReach } from "./scope.ts";

export const personBody = z
  .object({
    name: z.string().min(1).max(200).regex(/\S/, "a name needs more than spaces"),
    // A plain pattern, no `format`: the document then says exactly what is taken (JSON Schema's
    // email format and zod's own check disagree at the edges, e.g. on an apostrophe).
    email: z
      .string()
      .max(320)
      .regex(/^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$/, "an email address like name@example.com")
      .transform((e) => e.toLowerCase())
      .optional(),
  })
  .strict();
export const personIdPath = z.object({ id: z.string().min(1).max(64) });
export const membershipPath = z.object({ id: z.string().min(1).max(64), membershipId: z.string().min(1).max(64) });

type PersonRow = { id: string; name: string; email: string | null; disabled: boolean; createdAt: Date; updatedAt: Date };
export const personView = (p: PersonRow) => ({ id: p.id, name: p.name, email: p.email, disabled: p.disabled, createdAt: p.createdAt, updatedAt: p.updatedAt });

export async function personById(db: PrismaClient, raw: unknown) {
  const { id } = check(personIdPath, raw);
  const p = await db.person.findUnique({ where: { id } });
  if (!p) throw new AdminError(404, `no person '${id}'; \`ctl people list\` shows the ids`, "id");
  return p;
}

const isUniqueViolation = (err: unknown) => err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002";

export function peopleRoutes(db: PrismaClient, redis: Redis): Router {
  const r = Router();

  r.get("/people", async (req, res) => {
    const reach = await tenancyReach(db, req);
    const rows = await db.person.findMany({
      where: reach.all ? {} : { memberships: { some: membershipsWithin(reach) } },
      orderBy: { createdAt: "asc" },
      include: { _count: { select: { memberships: { where: membershipsWithin(reach) }, apiKeys: true } } },
    });
    res.json({ data: rows.map((p) => ({ ...personView(p), memberships: p._count.memberships, keys: p._count.apiKeys })) });
  });

  r.get("/people/:id", async (req, res) => {
    const p = await personById(db, req.params);
    const reach = await tenancyReach(db, req);
    const [memberships, identities] = await Promise.all([
      db.membership.findMany({ where: { personId: p.id, ...membershipsWithin(reach) }, orderBy: { createdAt: "asc" } }),
      db.personIdentity.findMany({ where: { personId: p.id } }),
    ]);
    if (!reach.all && memberships.length === 0) throw new AdminError(404, `no person '${p.id}' in the orgs you administer`, "id");
    const names = await scopeNames(db, memberships);
    res.json({ ...personView(p), memberships: memberships.map((m) => grantView(m, names)), identities: identities.map((i) => ({ provider: i.provider, subject: i.subject })) });
  });

  r.post("/people", async (req, res) => {
    const body = check(personBody, req.body);
    try {
      const p = await db.person.create({ data: { id: randomUUID(), name: body.name.trim(), email: body.email ?? null } });
      await audit(db, { action: "person.create", target: `person/${p.id}`, after: personView(p) });
      res.status(201).json(personView(p));
    } catch (err) {
      if (isUniqueViolation(err)) throw new AdminError(409, `a person with email '${body.email}' exists`, "email");
      throw err;
    }
  });

  for (const [action, disabled] of [["disable", true], ["enable", false]] as const) {
    r.post(`/people/:id/${action}`, async (req, res) => {
      const before = await personById(db, req.params);
      const after = before.disabled === disabled ? before : await db.person.update({ where: { id: before.id }, data: { disabled, version: { increment: 1 } } });
      // Even when already disabled: a session or cached key that slipped through ends now.
      if (disabled) await endPersonAccess(db, redis, before.id);
      if (before.disabled !== disabled) await audit(db, { action: `person.${action}`, target: `person/${before.id}`, before: personView(before), after: personView(after) });
      res.json(personView(after));
    });
  }

  r.delete("/people/:id", async (req, res) => {
    const before = await personById(db, req.params);
    // Before the delete: it finds the person's keys, which go with them.
    await endPersonAccess(db, redis, before.id);
    await db.person.delete({ where: { id: before.id } });
    await audit(db, { action: "person.delete", target: `person/${before.id}`, before: personView(before) });
    res.json({ deleted: true });
  });

  r.post("/people/:id/memberships", async (req, res) => {
    const p = await personById(db, req.params);
    const body = check(membershipBody, req.body);
    const reach = await tenancyReach(db, req);
    if (body.scope === "platform" && !reach.all) throw new AdminError(403, "a platform-wide role is granted by a platform-admin", "scope");
    // Another org's and a missing one read the same to an org-admin.
    const outside = () => new AdminError(404, `no ${body.scope} '${body.name ?? ""}' in the orgs you administer`, "name");
    const scopeId = await scopeIdOf(db, body.scope, body.name).catch((err: unknown) => {
      throw !reach.all && err instanceof AdminError && err.status === 404 ? outside() : err;
    });
    if (!reachesScope(reach, body.scope, scopeId)) throw outside();
    const exists = await db.membership.findFirst({ where: { personId: p.id, scope: body.scope, scopeId, role: body.role, source: "manual" } });
    if (exists) throw new AdminError(409, `${p.name} already holds ${body.role} at ${body.scope}${body.name ? ` '${body.name}'` : ""}`, "role");
    const m = await db.membership.create({ data: { id: randomUUID(), personId: p.id, scope: body.scope, scopeId, role: body.role, source: "manual" } });
    const view = grantView(m, await scopeNames(db, [m]));
    await audit(db, { action: "membership.add", target: `person/${p.id}`, after: view });
    res.status(201).json(view);
  });

  r.delete("/people/:id/memberships/:membershipId", async (req, res) => {
    const { id, membershipId } = check(membershipPath, req.params);
    const p = await personById(db, { id });
    const found = await db.membership.findFirst({ where: { id: membershipId, personId: p.id } });
    // Outside the caller's orgs: as if it were not there.
    const m = found && reachesScope(await tenancyReach(db, req), found.scope, found.scopeId) ? found : null;
    if (!m) throw new AdminError(404, `no membership '${membershipId}' of person '${p.id}'`, "membershipId");
    await db.membership.delete({ where: { id: m.id } });
    // Their keys are checked again on the next lookup; their sessions stay (roles are read per request).
    await endPersonAccess(db, redis, p.id, { sessions: false });
    await audit(db, { action: "membership.remove", target: `person/${p.id}`, before: grantView(m, await scopeNames(db, [m])) });
    res.json({ deleted: true });
  });

  return r;
}
