// Limits at org, team, project or key level (gateway/auth/limiter.ts enforces them). Named the way
// people know them: an org or project by name, a team as ORG/TEAM, a key by id.
import { randomUUID } from "node:crypto";
import { Router } from "express";
import { z } from "zod";
import type { PrismaClient } from "../../common/db.ts";
import { toMicros } from "../../common/pricing.ts";
import { LIMIT_SCOPES, type LimitScope } from "../auth/limit-book.ts";
import { TOOL_PATTERN } from "../mcp/grants.ts";
import { audit } from "./audit.ts";
import { AdminError, check } from "./errors.ts";
import { orgByName, teamIdByPath } from "./orgs.ts";
import { mustReach, tenancyReach, type Reach } from "./scope.ts";
import { projectByName } from "./tenancy.ts";

export const limitTarget = z.object({ scope: z.enum(LIMIT_SCOPES), name: z.string().min(1).max(200) });
/** The store keeps counts as int32. */
const count = z.number().int().min(0).max(2 ** 31 - 1).nullable().optional();
export const limitBody = z
  .object({
    rpm: count,
    tpm: count,
    concurrent: count,
    /** Money a month; kept in micros as a BIGINT, so bounded well inside it. */
    monthlyBudget: z.number().nonnegative().max(1e12).nullable().optional(),
    /** GPU-hours a month: what requests cost on our replicas (docs/people.md, "Chargeback in GPU-seconds"). */
    monthlyBudgetGpuHours: z.number().nonnegative().max(1e9).nullable().optional(),
    /** MCP tool grants (gateway/mcp/grants.ts); null or [] grants none. */
    tools: z.array(z.string().regex(TOOL_PATTERN, "a tool pattern: SERVER.TOOL, SERVER.* or *")).max(500).nullable().optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, { message: "set at least one of rpm, tpm, concurrent, monthlyBudget, monthlyBudgetGpuHours, tools (null clears one)" })
  .meta({ minProperties: 1 });

type LimitRow = {
  scope: string;
  scopeId: string;
  rpm: number | null;
  tpm: number | null;
  concurrent: number | null;
  monthlyBudgetMicros: bigint | null;
  monthlyBudgetGpuSeconds: number | null;
  tools: string[];
};
const view = (l: LimitRow, name: string) => ({
  scope: l.scope,
  name,
  rpm: l.rpm,
  tpm: l.tpm,
  concurrent: l.concurrent,
  monthlyBudget: l.monthlyBudgetMicros === null ? null : Number(l.monthlyBudgetMicros) / 1_000_000,
  // Kept in GPU-seconds, shown in the GPU-hours it is set in.
  // (to 12 digits: 0.0001 h × 3600 ÷ 3600 is not 0.0001 in floating point).
  monthlyBudgetGpuHours: l.monthlyBudgetGpuSeconds === null ? null : Number((l.monthlyBudgetGpuSeconds / 3600).toPrecision(12)),
  tools: l.tools,
});

async function notFound(scope: string, name: string, known: string[]): Promise<never> {
  throw new AdminError(404, `no ${scope} '${name}'; ${scope}s: ${known.join(", ") || "(none)"}`, "name");
}

/** The id of the org, team, project or key a limit is for, refused when outside the caller's reach. */
async function scopeId(db: PrismaClient, scope: LimitScope, name: string, reach: Reach): Promise<string> {
  if (!reach.all) return reachedScopeId(db, scope, name, reach);
  if (scope === "project") return (await projectByName(db, name, "name")).id;
  if (scope === "org") return (await orgByName(db, name, "name")).id;
  if (scope === "team") return teamIdByPath(db, name, "name");
  const key = await db.apiKey.findUnique({ where: { id: name } });
  return key?.id ?? notFound(scope, name, []);
}

/** An org-admin's: a team, project or key of their orgs; an org's own limits are platform-admin's to set. */
async function reachedScopeId(db: PrismaClient, scope: LimitScope, name: string, reach: Reach): Promise<string> {
  if (scope === "org") throw new AdminError(403, "an org's own limits and budget are set by a platform-admin; set those of its teams, projects and keys", "scope");
  if (scope === "project") {
    const p = await db.project.findUnique({ where: { name } });
    mustReach(reach, "project", p?.id, name, "name");
    return p!.id;
  }
  if (scope === "team") {
    const [org, team] = name.includes("/") ? name.split("/", 2) : ["default", name];
    const t = await db.team.findFirst({ where: { name: team, org: { name: org } } });
    mustReach(reach, "team", t?.id, name, "name");
    return t!.id;
  }
  const key = await db.apiKey.findUnique({ where: { id: name } });
  if (!key || !reach.projectIds.has(key.projectId)) throw new AdminError(404, `no key '${name}' in the orgs you administer`, "name");
  return key.id;
}

/** Display names for limit rows: ids back to the names people use. */
async function names(db: PrismaClient, rows: LimitRow[]): Promise<Map<string, string>> {
  const ids = (s: string) => rows.filter((r) => r.scope === s).map((r) => r.scopeId);
  const [orgs, teams, projects] = await Promise.all([
    db.org.findMany({ where: { id: { in: ids("org") } } }),
    db.team.findMany({ where: { id: { in: ids("team") } }, include: { org: true } }),
    db.project.findMany({ where: { id: { in: ids("project") } } }),
  ]);
  return new Map([...orgs.map((o) => [o.id, o.name] as const), ...teams.map((t) => [t.id, `${t.org.name}/${t.name}`] as const), ...projects.map((p) => [p.id, p.name] as const)]);
}

export function limitRoutes(db: PrismaClient): Router {
  const r = Router();

  r.get("/limits", async (req, res) => {
    const reach = await tenancyReach(db, req);
    let rows = await db.limit.findMany({ orderBy: [{ scope: "asc" }, { scopeId: "asc" }] });
    if (!reach.all) {
      const keys = new Set((await db.apiKey.findMany({ where: { projectId: { in: [...reach.projectIds] } }, select: { id: true } })).map((k) => k.id));
      const reached = new Set([...reach.orgIds, ...reach.teamIds, ...reach.projectIds, ...keys]);
      rows = rows.filter((l) => reached.has(l.scopeId));
    }
    const named = await names(db, rows);
    res.json({ data: rows.map((l) => view(l, named.get(l.scopeId) ?? l.scopeId)) });
  });

  r.put("/limits/:scope/:name", async (req, res) => {
    const t = check(limitTarget, req.params);
    const b = check(limitBody, req.body);
    const id = await scopeId(db, t.scope, t.name, await tenancyReach(db, req));
    const data = {
      ...(b.rpm !== undefined && { rpm: b.rpm }),
      ...(b.tpm !== undefined && { tpm: b.tpm }),
      ...(b.concurrent !== undefined && { concurrent: b.concurrent }),
      ...(b.monthlyBudget !== undefined && { monthlyBudgetMicros: b.monthlyBudget === null ? null : BigInt(toMicros(b.monthlyBudget)) }),
      ...(b.monthlyBudgetGpuHours !== undefined && { monthlyBudgetGpuSeconds: b.monthlyBudgetGpuHours === null ? null : b.monthlyBudgetGpuHours * 3600 }),
      ...(b.tools !== undefined && { tools: [...new Set(b.tools ?? [])] }),
    };
    const before = await db.limit.findUnique({ where: { scope_scopeId: { scope: t.scope, scopeId: id } } });
    const after = await db.limit.upsert({
      where: { scope_scopeId: { scope: t.scope, scopeId: id } },
      create: { id: randomUUID(), scope: t.scope, scopeId: id, ...data },
      update: data,
    });
    await audit(db, { action: "limit.set", target: `${t.scope}/${t.name}`, before: before && view(before, t.name), after: view(after, t.name) });
    res.json(view(after, t.name));
  });

  r.delete("/limits/:scope/:name", async (req, res) => {
    const t = check(limitTarget, req.params);
    const id = await scopeId(db, t.scope, t.name, await tenancyReach(db, req));
    const before = await db.limit.findUnique({ where: { scope_scopeId: { scope: t.scope, scopeId: id } } });
    if (!before) throw new AdminError(404, `no limits set for ${t.scope} '${t.name}'`, "name");
    await db.limit.delete({ where: { id: before.id } });
    await audit(db, { action: "limit.clear", target: `${t.scope}/${t.name}`, before: view(before, t.name) });
    res.json({ deleted: true });
  });

  return r;
}
