// A project's or one key's answer cache (docs/cache.md): shown, set and turned off. Every gateway
// reloads the settings from the change feed; answers already kept live out their TTL (and are not
// served once the cache is off: the gateway no longer looks).
import { Router, type Request } from "express";
import type { Redis } from "ioredis";
import { z } from "zod";
import { publishChange } from "../../common/change-feed.ts";
import type { PrismaClient } from "../../common/db.ts";
import { cacheSettingsBody, cacheSettingsId } from "../cache/settings.ts";
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
  key: z.string().nullable().describe("the key whose own cache this is; null: the project's"),
  cache: cacheSettingsView.nullable().describe("null: no answer cache of its own"),
  pgvector: z.boolean().describe("whether this PostgreSQL can have pgvector, which the similar cache needs"),
});
export const keyIdPath = z.object({ id: z.string().min(1).max(64) });

type Row = { ttlSeconds: number; exact: boolean; similar: number | null; embeddingModel: string | null; allowTemperature: boolean; updatedAt: Date };
const view = (r: Row | null) => (r === null ? null : { ttlSeconds: r.ttlSeconds, exact: r.exact, similar: r.similar, embeddingModel: r.embeddingModel, allowTemperature: r.allowTemperature, updatedAt: r.updatedAt.toISOString() });

/** Whether the extension is installed in this PostgreSQL (its files: scripts/pgvector.sh). */
async function pgvectorAvailable(db: PrismaClient): Promise<boolean> {
  const rows = await db.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM pg_available_extensions WHERE name = 'vector'");
  return (rows[0]?.n ?? 0) > 0;
}

/** Whose cache a route is about: a project's, or one key's (under its project). */
type Target = { id: string; projectId: string; keyId: string | null; project: string; audit: string };

export function cacheRoutes(db: PrismaClient, redis: Redis): Router {
  const r = Router();
  const ofProject = async (req: Request): Promise<Target> => {
    const p = await reachedProject(db, await tenancyReach(db, req), check(projectNamePath, { name: String(req.params.name) }).name, "name");
    return { id: cacheSettingsId("project", p.id), projectId: p.id, keyId: null, project: p.name, audit: `project/${p.name}` };
  };
  const ofKey = async (req: Request): Promise<Target> => {
    const { id } = check(keyIdPath, { id: String(req.params.id) });
    const reach = await tenancyReach(db, req);
    const k = await db.apiKey.findUnique({ where: { id }, include: { project: { select: { name: true } } } });
    if (!k || (!reach.all && !reach.projectIds.has(k.projectId))) throw new AdminError(404, `no key '${id}'${reach.all ? "" : " in the orgs you administer"}; \`ctl keys list\` shows the ids`, "id");
    return { id: cacheSettingsId("key", k.id), projectId: k.projectId, keyId: k.id, project: k.project.name, audit: `key/${k.id}` };
  };
  const answer = async (t: Target, row: Row | null) => ({ project: t.project, key: t.keyId, cache: view(row), pgvector: await pgvectorAvailable(db) });

  for (const [path, target] of [["/projects/:name/cache", ofProject], ["/keys/:id/cache", ofKey]] as const) {
    r.get(path, async (req, res) => {
      const t = await target(req);
      res.json(await answer(t, await db.answerCacheSetting.findUnique({ where: { id: t.id } })));
    });

    r.put(path, async (req, res) => {
      const t = await target(req);
      const body = check(cacheSettingsBody, req.body);
      if (body.embeddingModel !== null && !(await db.model.findUnique({ where: { name: body.embeddingModel }, select: { name: true } }))) {
        const names = (await db.model.findMany({ select: { name: true }, orderBy: { name: "asc" } })).map((m) => m.name);
        throw new AdminError(404, `no model '${body.embeddingModel}' in the catalog; models: ${names.join(", ") || "(none)"}`, "embeddingModel");
      }
      const before = await db.answerCacheSetting.findUnique({ where: { id: t.id } });
      const row = await db.answerCacheSetting.upsert({ where: { id: t.id }, create: { id: t.id, projectId: t.projectId, keyId: t.keyId, ...body }, update: body });
      await audit(db, { action: "cache.set", target: t.audit, before: view(before), after: view(row) });
      await publishChange(redis, { kind: "cache", project: t.projectId });
      res.json(await answer(t, row));
    });

    r.delete(path, async (req, res) => {
      const t = await target(req);
      const before = await db.answerCacheSetting.findUnique({ where: { id: t.id } });
      if (before) {
        await db.answerCacheSetting.delete({ where: { id: t.id } });
        await audit(db, { action: "cache.off", target: t.audit, before: view(before), after: null });
        await publishChange(redis, { kind: "cache", project: t.projectId });
      }
      res.json(await answer(t, null));
    });
  }
  return r;
}
