// The rules turning a directory's groups into memberships (gateway/people/group-memberships.ts
// applies them at sign-in and on SCIM changes). platform-admin's: list, show, create, replace, delete.
import { randomUUID } from "node:crypto";
import { Router } from "express";
import { z } from "zod";
import type { PrismaClient } from "../../common/db.ts";
import { audit } from "./audit.ts";
import { AdminError, check } from "./errors.ts";
import { grantView, groupMappingBody, scopeIdOf, scopeNames } from "./people-scopes.ts";

export const groupMappingId = z.object({ id: z.string().min(1).max(64) });

async function mappingById(db: PrismaClient, raw: unknown) {
  const { id } = check(groupMappingId, raw);
  const m = await db.groupMapping.findUnique({ where: { id } });
  if (!m) throw new AdminError(404, `no group mapping '${id}'; \`ctl group-mappings list\` shows the ids`, "id");
  return m;
}

export function groupMappingRoutes(db: PrismaClient): Router {
  const r = Router();

  r.get("/group-mappings", async (_req, res) => {
    const rows = await db.groupMapping.findMany({ orderBy: [{ group: "asc" }, { createdAt: "asc" }] });
    const names = await scopeNames(db, rows);
    res.json({ data: rows.map((m) => grantView(m, names)) });
  });

  r.get("/group-mappings/:id", async (req, res) => {
    const m = await mappingById(db, req.params);
    res.json(grantView(m, await scopeNames(db, [m])));
  });

  /** The rule a body describes, refused when another rule says the same. */
  async function ruleOf(raw: unknown, self: string | null) {
    const body = check(groupMappingBody, raw);
    const scopeId = await scopeIdOf(db, body.scope, body.name);
    const provider = body.provider ?? null;
    // The unique index cannot see two NULL providers as equal: looked for first.
    const exists = await db.groupMapping.findFirst({ where: { provider, group: body.group, scope: body.scope, scopeId, role: body.role, ...(self ? { id: { not: self } } : {}) } });
    if (exists) throw new AdminError(409, `that mapping exists: ${exists.id}`, "group");
    return { provider, group: body.group, scope: body.scope, scopeId, role: body.role };
  }

  r.post("/group-mappings", async (req, res) => {
    const m = await db.groupMapping.create({ data: { id: randomUUID(), ...(await ruleOf(req.body, null)) } });
    const view = grantView(m, await scopeNames(db, [m]));
    await audit(db, { action: "group-mapping.create", target: `group-mapping/${m.id}`, after: view });
    res.status(201).json(view);
  });

  r.put("/group-mappings/:id", async (req, res) => {
    const before = await mappingById(db, req.params);
    const m = await db.groupMapping.update({ where: { id: before.id }, data: await ruleOf(req.body, before.id) });
    const names = await scopeNames(db, [before, m]);
    await audit(db, { action: "group-mapping.replace", target: `group-mapping/${m.id}`, before: grantView(before, names), after: grantView(m, names) });
    res.json(grantView(m, names));
  });

  r.delete("/group-mappings/:id", async (req, res) => {
    const m = await mappingById(db, req.params);
    await db.groupMapping.delete({ where: { id: m.id } });
    // Memberships it gave stay until the person's next sign-in or SCIM change recomputes them.
    await audit(db, { action: "group-mapping.delete", target: `group-mapping/${m.id}`, before: grantView(m, await scopeNames(db, [m])) });
    res.json({ deleted: true });
  });

  return r;
}
