// A project's answer cache (docs/cache.md): shown, set and turned off. Every gateway reloads the
// settings from the change feed; answers already kept live out their TTL (or are never served
// again once the cache is off, since the gateway no longer looks).
import { Router, type Request } from "express";
import type { Redis } from "ioredis";
import { z } from "zod";
import { publishChange } from "../../common/change-feed.ts";
import type { PrismaClient } from "../../common/db.ts";
import { cacheSettingsBody } from "../cache/settings.ts";
import { audit } from "./audit.ts";
import { AdminError, check } from "./errors.ts";
import { projectNamePath, reachedProject } from "./tenancy.ts";
import { tenancyReach } from "./scope.ts";

export const cacheSettingsView = z.object({
  ttlSeconds: z.number().int(),
  exact: z.boolean(),
  similar: z.number().nullable(),
  embeddingModel: z.string().nullable(),
  allowTemperature: z.boolean(),
  updatedAt: z.string(),
});
export const projectCache = z.object({
  project: z.string(),
  cache: cacheSettingsView.nullable().describe("null: the project has no answer cache"),
  pgvector: z.boolean().describe("whether this PostgreSQL can have pgvector, which the similar cache needs"),
});

type Row = { ttlSeconds: number; exact: boolean; similar: number | null; embeddingModel: string | null; allowTemperature: boolean; updatedAt: Date };
const view = (r: Row | null) => (r === null ? null : { ttlSeconds: r.ttlSeconds, exact: r.exact, similar: r.similar, embeddingModel: r.embeddingModel, allowTemperature: r.allowTemperature, updatedAt: r.updatedAt.toISOString() });

/** Whether the extension is installed in this PostgreSQL (its files: scripts/pgvector.sh). */
async function pgvectorAvailable(db: PrismaClient): Promise<boolean> {
  const rows = await db.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM pg_available_extensions WHERE name = 'vector'");
  return (rows[0]?.n ?? 0) > 0;
}

export function cacheRoutes(db: PrismaClient, redis: Redis): Router {
  const r = Router();
  const project = async (req: Request) => reachedProject(db, await tenancyReach(db, req), check(projectNamePath, { name: String(req.params.name) }).name, "name");

  r.get("/projects/:name/cache", async (req, res) => {
    const p = await project(req);
    const row = await db.answerCacheSetting.findUnique({ where: { projectId: p.id } });
    res.json({ project: p.name, cache: view(row), pgvector: await pgvectorAvailable(db) });
  });

  r.put("/projects/:name/cache", async (req, res) => {
    const p = await project(req);
    const body = check(cacheSettingsBody, req.body);
    if (body.embeddingModel !== null && !(await db.model.findUnique({ where: { name: body.embeddingModel }, select: { name: true } }))) {
      const names = (await db.model.findMany({ select: { name: true }, orderBy: { name: "asc" } })).map((m) => m.name);
      throw new AdminError(404, `no model '${body.embeddingModel}' in the catalog; models: ${names.join(", ") || "(none)"}`, "embeddingModel");
    }
    const before = await db.answerCacheSetting.findUnique({ where: { projectId: p.id } });
    const row = await db.answerCacheSetting.upsert({ where: { projectId: p.id }, create: { projectId: p.id, ...body }, update: body });
    await audit(db, { action: "project.cache", target: `project/${p.name}`, before: view(before), after: view(row) });
    await publishChange(redis, { kind: "cache", project: p.id });
    res.json({ project: p.name, cache: view(row), pgvector: await pgvectorAvailable(db) });
  });

  r.delete("/projects/:name/cache", async (req, res) => {
    const p = await project(req);
    const before = await db.answerCacheSetting.findUnique({ where: { projectId: p.id } });
    if (before) {
      await db.answerCacheSetting.delete({ where: { projectId: p.id } });
      await audit(db, { action: "project.cache", target: `project/${p.name}`, before: view(before), after: null });
      await publishChange(redis, { kind: "cache", project: p.id });
    }
    res.json({ project: p.name, cache: null, pgvector: await pgvectorAvailable(db) });
  });
  return r;
}
