// The signed-in person's own profile and keys. A person's key belongs to one of their projects and
// works there only while they hold a role that may make keys (gateway/auth/person-grants.ts): the
// key cache checks again on each load, and disabling them or their leaving evicts it everywhere.
import { randomUUID } from "node:crypto";
import { Router, type Request } from "express";
import type { Redis } from "ioredis";
import { publishChange } from "../../common/change-feed.ts";
import type { PrismaClient } from "../../common/db.ts";
import { newApiKey } from "../../common/secrets.ts";
import { grantsProject, KEY_ROLES } from "../auth/person-grants.ts";
import { audit } from "./audit.ts";
import { AdminError, check } from "./errors.ts";
import { grantView, scopeNames } from "./people-scopes.ts";
import { principalOf } from "./principal.ts";
import { keyBody, keyId } from "./tenancy.ts";

/** A person's own key: of a project they may make keys in. */
export const myKeyBody = keyBody;

function person(req: Request) {
  const p = principalOf(req);
  // The role table lets only people here; this keeps the types honest.
  if (p.kind !== "person") throw new AdminError(403, "the admin token is no person: sign in to have keys of your own");
  return p;
}

type KeyRow = { id: string; prefix: string; name: string | null; models: string[]; band: string; expiresAt: Date | null; revokedAt: Date | null; createdAt: Date; project: { name: string } };
const myKeyView = (k: KeyRow) => ({ id: k.id, prefix: k.prefix, name: k.name, project: k.project.name, models: k.models, band: k.band, expiresAt: k.expiresAt, revoked: k.revokedAt !== null, createdAt: k.createdAt });

export function meRoutes(db: PrismaClient, redis: Redis): Router {
  const r = Router();

  r.get("/me", async (req, res) => {
    const p = person(req);
    const names = await scopeNames(db, p.memberships);
    res.json({ person: p.person, memberships: p.memberships.map((m) => grantView(m, names)), roles: [...p.roles].sort(), csrf: p.session.csrf });
  });

  r.get("/me/keys", async (req, res) => {
    const p = person(req);
    const rows = await db.apiKey.findMany({ where: { personId: p.person.id }, include: { project: true }, orderBy: { createdAt: "asc" } });
    res.json({ data: rows.map(myKeyView) });
  });

  r.post("/me/keys", async (req, res) => {
    const p = person(req);
    const body = check(myKeyBody, req.body);
    const project = await db.project.findUnique({ where: { name: body.project }, include: { team: true } });
    if (!project || !grantsProject(p.memberships, { projectId: project.id, teamId: project.teamId, orgId: project.team.orgId })) {
      throw new AdminError(403, `you hold no role in project '${body.project}' that makes keys (${KEY_ROLES.join(", ")})`, "project");
    }
    const k = newApiKey();
    const row = await db.apiKey.create({
      data: { id: randomUUID(), projectId: project.id, personId: p.person.id, name: body.name ?? null, hash: k.hash, prefix: k.prefix, models: body.models ?? [], band: body.band, expiresAt: body.expiresAt ? new Date(body.expiresAt) : null },
      include: { project: true },
    });
    await audit(db, { action: "key.create", target: `key/${row.id}`, after: { ...myKeyView(row), personId: p.person.id } });
    res.status(201).json({ ...myKeyView(row), key: k.key });
  });

  r.delete("/me/keys/:id", async (req, res) => {
    const p = person(req);
    const { id } = check(keyId, req.params);
    const before = await db.apiKey.findFirst({ where: { id, personId: p.person.id }, include: { project: true } });
    if (!before) throw new AdminError(404, `you have no key '${id}'; GET /me/keys lists yours`, "id");
    const after = before.revokedAt ? before : await db.apiKey.update({ where: { id }, data: { revokedAt: new Date() }, include: { project: true } });
    await publishChange(redis, { kind: "key", op: "revoked", hash: before.hash });
    if (!before.revokedAt) await audit(db, { action: "key.revoke", target: `key/${id}`, before: myKeyView(before), after: myKeyView(after) });
    res.json(myKeyView(after));
  });

  return r;
}
