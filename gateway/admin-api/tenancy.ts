// Projects and API keys. A key is shown once, at creation; the store keeps its hash and prefix.
import { randomUUID } from "node:crypto";
import { Router } from "express";
import { z } from "zod";
import type { PrismaClient } from "../../common/db.ts";
import { newApiKey } from "../../common/secrets.ts";
import { AdminError, check } from "./errors.ts";

const DEFAULT_ORG = "default";
const DEFAULT_TEAM = "default";

const projectBody = z.object({ name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, "lower-case letters, digits, . _ - (at most 63)") });
const keyBody = z.object({
  project: z.string().min(1),
  name: z.string().max(128).optional(),
  models: z.array(z.string().min(1)).optional(),
  expiresAt: z.iso.datetime({ offset: true }).optional(),
});

/** The default org and team that projects made without one belong to. */
async function defaultTeamId(db: PrismaClient): Promise<string> {
  const org = await db.org.upsert({ where: { name: DEFAULT_ORG }, create: { id: randomUUID(), name: DEFAULT_ORG }, update: {} });
  const team = await db.team.upsert({
    where: { orgId_name: { orgId: org.id, name: DEFAULT_TEAM } },
    create: { id: randomUUID(), orgId: org.id, name: DEFAULT_TEAM },
    update: {},
  });
  return team.id;
}

export function tenancyRoutes(db: PrismaClient): Router {
  const r = Router();

  r.get("/projects", async (_req, res) => {
    const rows = await db.project.findMany({ orderBy: { name: "asc" }, include: { _count: { select: { apiKeys: true } } } });
    res.json({ data: rows.map((p) => ({ id: p.id, name: p.name, keys: p._count.apiKeys, createdAt: p.createdAt })) });
  });

  r.post("/projects", async (req, res) => {
    const body = check(projectBody, req.body);
    const exists = await db.project.findUnique({ where: { name: body.name } });
    if (exists) return void res.status(200).json({ id: exists.id, name: exists.name, created: false });
    const p = await db.project.create({ data: { id: randomUUID(), name: body.name, teamId: await defaultTeamId(db) } });
    res.status(201).json({ id: p.id, name: p.name, created: true });
  });

  r.post("/keys", async (req, res) => {
    const body = check(keyBody, req.body);
    const project = await db.project.findUnique({ where: { name: body.project } });
    if (!project) {
      const names = (await db.project.findMany({ select: { name: true } })).map((p) => p.name);
      throw new AdminError(404, `no project '${body.project}'; projects: ${names.join(", ") || "(none)"}`, "project");
    }
    const k = newApiKey();
    const row = await db.apiKey.create({
      data: {
        id: randomUUID(),
        projectId: project.id,
        name: body.name ?? null,
        hash: k.hash,
        prefix: k.prefix,
        models: body.models ?? [],
        expiresAt: body.expiresAt ? new Date(body.expiresAt) : null,
      },
    });
    res.status(201).json({ id: row.id, key: k.key, prefix: row.prefix, project: project.name, models: row.models, expiresAt: row.expiresAt });
  });

  r.get("/keys", async (req, res) => {
    const project = typeof req.query.project === "string" ? req.query.project : undefined;
    const rows = await db.apiKey.findMany({
      where: project ? { project: { name: project } } : {},
      include: { project: true },
      orderBy: { createdAt: "asc" },
    });
    res.json({
      data: rows.map((k) => ({ id: k.id, prefix: k.prefix, name: k.name, project: k.project.name, models: k.models, expiresAt: k.expiresAt, revoked: k.revokedAt !== null })),
    });
  });

  return r;
}
