// People and their memberships (platform-admin's): list, show, create, disable, enable, delete,
// and the roles they hold where. Disabling or deleting a person, or removing one of their
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

export const personBody = z
  .object({
    name: z.string().min(1).max(200).regex(/\S/, "a name needs more than spaces"),
    email: z.email().max(320).transform((e) => e.toLowerCase()).optional(),
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

  r.get("/people", async (_req, res) => {
    const rows = await db.person.findMany({ orderBy: { createdAt: "asc" }, include: { _count: { select: { memberships: true, apiKeys: true } } } });
    res.json({ data: rows.map((p) => ({ ...personView(p), memberships: p._count.memberships, keys: p._count.apiKeys })) });
  });

  r.get("/people/:id", async (req, res) => {
    const p = await personById(db, req.params);
    const [memberships, identities] = await Promise.all([db.membership.findMany({ where: { personId: p.id }, orderBy: { createdAt: "asc" } }), db.personIdentity.findMany({ where: { personId: p.id } })]);
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
    const scopeId = await scopeIdOf(db, body.scope, body.name);
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
    const m = await db.membership.findFirst({ where: { id: membershipId, personId: p.id } });
    if (!m) throw new AdminError(404, `no membership '${membershipId}' of person '${p.id}'`, "membershipId");
    await db.membership.delete({ where: { id: m.id } });
    // Their keys are checked again on the next lookup; their sessions stay (roles are read per request).
    await endPersonAccess(db, redis, p.id, { sessions: false });
    await audit(db, { action: "membership.remove", target: `person/${p.id}`, before: grantView(m, await scopeNames(db, [m])) });
    res.json({ deleted: true });
  });

  return r;
}
