// Guardrail policies (gateway/guard/): add (a new version when the name exists), list, show,
// remove; the merged policy a key and model get (explain); the record of blocks and flags.
// Every change is told to the gateways over the change feed, which reload their policies.
import { Router } from "express";
import type { Redis } from "ioredis";
import { z } from "zod";
import { publishChange } from "../../common/change-feed.ts";
import type { PrismaClient } from "../../common/db.ts";
import { describe } from "../guard/merge.ts";
import { checkPolicy, PolicyError } from "../guard/policy.ts";
import { loadPolicies, mergedFor } from "../guard/service.ts";
import { audit } from "./audit.ts";
import { AdminError, check } from "./errors.ts";

export const guardPolicyName = z.object({ name: z.string().min(1).max(63) });
export const guardExplainQuery = z.object({ key: z.string().min(1).max(200), model: z.string().min(1).max(200) });
export const guardEventsQuery = z.object({
  since: z.iso.datetime({ offset: true }).optional().describe("ISO time; the last day by default"),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
});

type Row = { name: string; version: number; scope: string; document: unknown; createdAt: Date; updatedAt: Date };
const view = (r: Row) => ({ name: r.name, version: r.version, scope: r.scope, policy: r.document as Record<string, unknown>, createdAt: r.createdAt.toISOString(), updatedAt: r.updatedAt.toISOString() });

export function guardRoutes(db: PrismaClient, redis: Redis): Router {
  const r = Router();
  r.post("/guard/policies", async (req, res) => {
    let doc;
    try {
      doc = checkPolicy(req.body);
    } catch (err) {
      if (err instanceof PolicyError) throw new AdminError(400, err.message, err.field);
      throw err;
    }
    const before = await db.guardPolicy.findUnique({ where: { name: doc.name } });
    const scope = doc.scope === "default" ? { scope: "default", scopeId: null } : { scope: doc.scope.slice(0, doc.scope.indexOf(":")), scopeId: doc.scope.slice(doc.scope.indexOf(":") + 1) };
    const version = (before?.version ?? 0) + 1;
    const row = await db.guardPolicy.upsert({
      where: { name: doc.name },
      create: { name: doc.name, version, ...scope, document: doc },
      update: { version, ...scope, document: doc },
    });
    await audit(db, { action: "guard.policy.add", target: `guard/${doc.name}`, before: before?.document ?? null, after: doc });
    await publishChange(redis, { kind: "guard", name: doc.name });
    res.json(view(row));
  });
  r.get("/guard/policies", async (_req, res) => {
    res.json({ data: (await db.guardPolicy.findMany({ orderBy: { name: "asc" } })).map(view) });
  });
  r.get("/guard/policies/:name", async (req, res) => {
    const { name } = check(guardPolicyName, req.params);
    const row = await db.guardPolicy.findUnique({ where: { name } });
    if (!row) throw new AdminError(404, `no guard policy '${name}'`, "name");
    res.json(view(row));
  });
  r.delete("/guard/policies/:name", async (req, res) => {
    const { name } = check(guardPolicyName, req.params);
    const row = await db.guardPolicy.findUnique({ where: { name } });
    if (!row) throw new AdminError(404, `no guard policy '${name}'`, "name");
    await db.guardPolicy.delete({ where: { name } });
    await audit(db, { action: "guard.policy.remove", target: `guard/${name}`, before: row.document, after: null });
    await publishChange(redis, { kind: "guard", name });
    res.json({ deleted: true });
  });
  r.get("/guard/explain", async (req, res) => {
    const q = check(guardExplainQuery, req.query);
    const key = await db.apiKey.findUnique({ where: { id: q.key }, include: { project: { include: { team: true } } } });
    if (!key) throw new AdminError(404, `no key '${q.key}'`, "key");
    const merged = mergedFor(await loadPolicies(db), { id: key.id, projectId: key.projectId, teamId: key.project.teamId, orgId: key.project.team.orgId }, q.model);
    res.json({ key: key.id, model: q.model, merged: merged ? describe(merged) : null });
  });
  r.get("/guard/events", async (req, res) => {
    const q = check(guardEventsQuery, req.query);
    const since = q.since ? new Date(q.since) : new Date(Date.now() - 86_400_000);
    if (Number.isNaN(since.getTime())) throw new AdminError(400, "since: not a time this server can read", "since");
    const rows = await db.guardEvent.findMany({ where: { at: { gte: since } }, orderBy: { at: "desc" }, take: q.limit ?? 200 });
    res.json({ data: rows.map((e) => ({ ...e, at: e.at.toISOString() })) });
  });
  return r;
}
