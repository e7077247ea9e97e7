// Projects and API keys. A key is shown once, at creation; the store keeps its hash and prefix.
// Revoking or rotating a key publishes it on the change feed, so every gateway's cache drops it.
import { randomUUID } from "node:crypto";
import { Router } from "express";
import type { Redis } from "ioredis";
import { z } from "zod";
import { publishChange } from "../../common/change-feed.ts";
import type { PrismaClient } from "../../common/db.ts";
import { newApiKey } from "../../common/secrets.ts";
import { BANDS } from "../router/admission.ts";
import { audit } from "./audit.ts";
import { AdminError, check } from "./errors.ts";
import { DEFAULT_TEAM_PATH, NAME, teamIdByPath } from "./orgs.ts";
import { mustReach, tenancyReach, within, type Reach } from "./scope.ts";

export const projectBody = z.object({
  name: NAME,
  team: z.string().min(1).max(127).default(DEFAULT_TEAM_PATH).describe("ORG/TEAM"),
});
export const projectNamePath = z.object({ name: NAME });
/** A project's settings; each one left out stays as it is. */
export const projectSettingsBody = z.object({
  noStore: z.boolean().optional().describe("keep no /v1/responses answers (store is ignored, previous_response_id refused)"),
});
export const keyBody = z.object({
  project: z.string().min(1),
  name: z.string().max(128).optional(),
  models: z.array(z.string().min(1)).optional(),
  band: z.enum(BANDS).default("interactive").describe("the admission band its requests queue in"),
  expiresAt: z.iso.datetime({ offset: true }).optional(),
});
export const keyId = z.object({ id: z.string().min(1).max(64) });
export const rotateBody = z.object({ overlapSeconds: z.number().int().min(0).max(30 * 86_400).default(3_600) });
export const keysQuery = z.object({ project: z.string().min(1).optional() });

type KeyRow = { id: string; prefix: string; name: string | null; projectId: string; models: string[]; band: string; expiresAt: Date | null; revokedAt: Date | null };
/** A key as the audit log and the API show it: never the secret, never its hash. */
const keyView = (k: KeyRow) => ({ id: k.id, prefix: k.prefix, name: k.name, projectId: k.projectId, models: k.models, band: k.band, expiresAt: k.expiresAt, revokedAt: k.revokedAt });

/** Throws a 404 naming the existing projects. */
export async function projectByName(db: PrismaClient, name: string, field = "project") {
  const project = await db.project.findUnique({ where: { name } });
  if (project) return project;
  const names = (await db.project.findMany({ select: { name: true }, orderBy: { name: "asc" } })).map((p) => p.name);
  throw new AdminError(404, `no project '${name}'; projects: ${names.join(", ") || "(none)"}`, field);
}

/** A project the caller reaches: outside their orgs it is a 404 that names no other project. */
export async function reachedProject(db: PrismaClient, reach: Reach, name: string, field = "project") {
  if (reach.all) return projectByName(db, name, field);
  const project = await db.project.findUnique({ where: { name } });
  mustReach(reach, "project", project?.id, name, field);
  return project!;
}

async function keyById(db: PrismaClient, raw: unknown, reach: Reach) {
  const { id } = check(keyId, raw);
  const k = await db.apiKey.findUnique({ where: { id } });
  if (k && !reach.all && !reach.projectIds.has(k.projectId)) throw new AdminError(404, `no key '${id}' in the orgs you administer`, "id");
  if (!k) throw new AdminError(404, `no key '${id}'; \`ctl keys list\` shows the ids`, "id");
  return k;
}

export function tenancyRoutes(db: PrismaClient, redis: Redis): Router {
  const r = Router();

  r.get("/projects", async (req, res) => {
    const reach = await tenancyReach(db, req);
    const rows = await db.project.findMany({ where: { id: within(reach.all, reach.projectIds) }, orderBy: { name: "asc" }, include: { team: { include: { org: true } }, _count: { select: { apiKeys: true } } } });
    res.json({ data: rows.map((p) => ({ id: p.id, name: p.name, team: `${p.team.org.name}/${p.team.name}`, keys: p._count.apiKeys, noStore: p.noStore, createdAt: p.createdAt })) });
  });

  r.patch("/projects/:name/settings", async (req, res) => {
    const { name } = check(projectNamePath, { name: String(req.params.name) });
    const body = check(projectSettingsBody, req.body);
    const before = await reachedProject(db, await tenancyReach(db, req), name, "name");
    // Stored answers already kept stay until deleted or past retention: turning no_store on stops new ones.
    const p = await db.project.update({ where: { id: before.id }, data: { noStore: body.noStore ?? before.noStore } });
    await audit(db, { action: "project.settings", target: `project/${p.name}`, before: { noStore: before.noStore }, after: { noStore: p.noStore } });
    res.json({ name: p.name, noStore: p.noStore });
  });

  r.post("/projects", async (req, res) => {
    const body = check(projectBody, req.body);
    const reach = await tenancyReach(db, req);
    if (!reach.all) {
      // Before teamIdByPath, which would make default/default: an org-admin names a team of theirs.
      const [org, team] = body.team.includes("/") ? body.team.split("/", 2) : ["default", body.team];
      mustReach(reach, "team", (await db.team.findFirst({ where: { name: team, org: { name: org } } }))?.id, body.team, "team");
    }
    const exists = await db.project.findUnique({ where: { name: body.name } });
    if (exists) {
      mustReach(reach, "project", exists.id, exists.name, "name");
      return void res.status(200).json({ id: exists.id, name: exists.name, created: false });
    }
    const p = await db.project.create({ data: { id: randomUUID(), name: body.name, teamId: await teamIdByPath(db, body.team) } });
    await audit(db, { action: "project.create", target: `project/${p.name}`, after: p });
    res.status(201).json({ id: p.id, name: p.name, created: true });
  });

  r.post("/keys", async (req, res) => {
    const body = check(keyBody, req.body);
    const project = await reachedProject(db, await tenancyReach(db, req), body.project);
    const k = newApiKey();
    const row = await db.apiKey.create({
      data: {
        id: randomUUID(),
        projectId: project.id,
        name: body.name ?? null,
        hash: k.hash,
        prefix: k.prefix,
        models: body.models ?? [],
        band: body.band,
        expiresAt: body.expiresAt ? new Date(body.expiresAt) : null,
      },
    });
    await audit(db, { action: "key.create", target: `key/${row.id}`, after: keyView(row) });
    res.status(201).json({ id: row.id, key: k.key, prefix: row.prefix, project: project.name, models: row.models, band: row.band, expiresAt: row.expiresAt });
  });

  r.post("/keys/:id/revoke", async (req, res) => {
    const before = await keyById(db, req.params, await tenancyReach(db, req));
    const after = before.revokedAt ? before : await db.apiKey.update({ where: { id: before.id }, data: { revokedAt: new Date() } });
    await publishChange(redis, { kind: "key", op: "revoked", hash: before.hash });
    if (!before.revokedAt) await audit(db, { action: "key.revoke", target: `key/${before.id}`, before: keyView(before), after: keyView(after) });
    res.json({ ...keyView(after), revoked: true });
  });

  // A new key with the old one's project, name and models; the old one keeps working for the overlap.
  r.post("/keys/:id/rotate", async (req, res) => {
    const old = await keyById(db, req.params, await tenancyReach(db, req));
    const { overlapSeconds } = check(rotateBody, req.body ?? {});
    if (old.revokedAt) throw new AdminError(409, `key '${old.id}' is revoked; create a new one instead`, "id");
    const oldUntil = new Date(Date.now() + overlapSeconds * 1000);
    const k = newApiKey();
    const [fresh, retired] = await db.$transaction([
      db.apiKey.create({
        data: { id: randomUUID(), projectId: old.projectId, personId: old.personId, name: old.name, hash: k.hash, prefix: k.prefix, models: old.models, band: old.band, expiresAt: old.expiresAt },
      }),
      db.apiKey.update({ where: { id: old.id }, data: { expiresAt: old.expiresAt && old.expiresAt < oldUntil ? old.expiresAt : oldUntil } }),
    ]);
    await publishChange(redis, { kind: "key", op: "changed", hash: old.hash });
    await audit(db, { action: "key.rotate", target: `key/${old.id}`, before: keyView(old), after: { old: keyView(retired), new: keyView(fresh) } });
    res.status(201).json({ id: fresh.id, key: k.key, prefix: fresh.prefix, models: fresh.models, expiresAt: fresh.expiresAt, old: { id: retired.id, expiresAt: retired.expiresAt } });
  });

  r.get("/keys", async (req, res) => {
    const { project } = check(keysQuery, req.query);
    const reach = await tenancyReach(db, req);
    const rows = await db.apiKey.findMany({
      where: { ...(project ? { project: { name: project } } : {}), projectId: within(reach.all, reach.projectIds) },
      include: { project: true },
      orderBy: { createdAt: "asc" },
    });
    res.json({
      data: rows.map((k) => ({ id: k.id, prefix: k.prefix, name: k.name, project: k.project.name, models: k.models, band: k.band, expiresAt: k.expiresAt, revoked: k.revokedAt !== null })),
    });
  });

  return r;
}
