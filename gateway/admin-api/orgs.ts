// Organizations and their teams: the top of the tenancy tree (org → team → project → key). A team
// is named ORG/TEAM, as limits name it. Projects made without a team go to default/default.
import { randomUUID } from "node:crypto";
import { Router } from "express";
import { z } from "zod";
import type { PrismaClient } from "../../common/db.ts";
import { audit } from "./audit.ts";
import { AdminError, check } from "./errors.ts";
import { mustReach, tenancyReach, within } from "./scope.ts";

/** Names of orgs, teams and projects. */
export const NAME = z.string().regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, "lower-case letters, digits, . _ - (at most 63)");
export const orgBody = z.object({ name: NAME });
export const teamBody = z.object({ org: NAME, name: NAME });

export const DEFAULT_TEAM_PATH = "default/default";

/** Throws a 404 naming the orgs that exist. */
export async function orgByName(db: PrismaClient, name: string, field: string) {
  const org = await db.org.findUnique({ where: { name } });
  if (org) return org;
  const names = (await db.org.findMany({ select: { name: true }, orderBy: { name: "asc" } })).map((o) => o.name);
  throw new AdminError(404, `no org '${name}'; orgs: ${names.join(", ") || "(none)"}`, field);
}

/**
 * The id of team ORG/TEAM; default/default is made on first use, any other must exist (a 404
 * names the teams that do).
 */
export async function teamIdByPath(db: PrismaClient, path: string, field = "team"): Promise<string> {
  const [orgName, teamName] = path.includes("/") ? path.split("/", 2) : ["default", path];
  if (`${orgName}/${teamName}` === DEFAULT_TEAM_PATH) {
    const org = await db.org.upsert({ where: { name: "default" }, create: { id: randomUUID(), name: "default" }, update: {} });
    const team = await db.team.upsert({ where: { orgId_name: { orgId: org.id, name: "default" } }, create: { id: randomUUID(), orgId: org.id, name: "default" }, update: {} });
    return team.id;
  }
  const team = await db.team.findFirst({ where: { name: teamName, org: { name: orgName } } });
  if (team) return team.id;
  const known = (await db.team.findMany({ include: { org: true } })).map((t) => `${t.org.name}/${t.name}`).sort();
  throw new AdminError(404, `no team '${orgName}/${teamName}'; teams: ${known.join(", ") || "(none)"}`, field);
}

export function orgRoutes(db: PrismaClient): Router {
  const r = Router();

  r.get("/orgs", async (req, res) => {
    const reach = await tenancyReach(db, req);
    const rows = await db.org.findMany({ where: { id: within(reach.all, reach.orgIds) }, orderBy: { name: "asc" }, include: { _count: { select: { teams: true } } } });
    res.json({ data: rows.map((o) => ({ id: o.id, name: o.name, teams: o._count.teams, createdAt: o.createdAt })) });
  });

  r.post("/orgs", async (req, res) => {
    const { name } = check(orgBody, req.body);
    const exists = await db.org.findUnique({ where: { name } });
    if (exists) return void res.status(200).json({ id: exists.id, name, created: false });
    const o = await db.org.create({ data: { id: randomUUID(), name } });
    await audit(db, { action: "org.create", target: `org/${name}`, after: o });
    res.status(201).json({ id: o.id, name, created: true });
  });

  r.get("/teams", async (req, res) => {
    const reach = await tenancyReach(db, req);
    const rows = await db.team.findMany({ where: { id: within(reach.all, reach.teamIds) }, include: { org: true, _count: { select: { projects: true } } } });
    const data = rows.map((t) => ({ id: t.id, name: `${t.org.name}/${t.name}`, org: t.org.name, projects: t._count.projects, createdAt: t.createdAt }));
    res.json({ data: data.sort((a, b) => a.name.localeCompare(b.name)) });
  });

  r.post("/teams", async (req, res) => {
    const body = check(teamBody, req.body);
    const reach = await tenancyReach(db, req);
    if (!reach.all) mustReach(reach, "org", (await db.org.findUnique({ where: { name: body.org } }))?.id, body.org, "org");
    const org = await orgByName(db, body.org, "org");
    const path = `${org.name}/${body.name}`;
    const exists = await db.team.findUnique({ where: { orgId_name: { orgId: org.id, name: body.name } } });
    if (exists) return void res.status(200).json({ id: exists.id, name: path, created: false });
    const t = await db.team.create({ data: { id: randomUUID(), orgId: org.id, name: body.name } });
    await audit(db, { action: "team.create", target: `team/${path}`, after: t });
    res.status(201).json({ id: t.id, name: path, created: true });
  });

  return r;
}
