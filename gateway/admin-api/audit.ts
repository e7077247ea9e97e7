// The audit log: every admin change is written with who made it, what, when, and the object
// before and after. Callers pass views of objects that hold no secrets (never a key or its hash).
import { randomUUID } from "node:crypto";
import { Router } from "express";
import { z } from "zod";
import { Prisma, type PrismaClient } from "../../common/db.ts";
import { check } from "./errors.ts";
import { MCP_AUDIT_ACTION } from "../mcp/audit.ts";
import { actorContext, type Actor } from "./principal.ts";

/** A change made outside any request (none today): the system's. */
export const SYSTEM_ACTOR: Actor = { actor: "system", personId: null };

export interface AuditEntry {
  action: string;
  target: string;
  before?: unknown;
  after?: unknown;
}

const asJson = (v: unknown) => (v === undefined || v === null ? Prisma.DbNull : (JSON.parse(JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? x.toString() : x))) as Prisma.InputJsonValue));

/** Written as the request's principal (`person:<id>` with personId, or `admin-token`: gateway/admin-api/principal.ts). */
export async function audit(db: Pick<PrismaClient, "auditEvent">, e: AuditEntry, who: Actor = actorContext.getStore() ?? SYSTEM_ACTOR): Promise<void> {
  await db.auditEvent.create({ data: { id: randomUUID(), actor: who.actor, personId: who.personId, action: e.action, target: e.target, before: asJson(e.before), after: asJson(e.after) } });
}

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `24h`, `30m`, `7d` back from now, or an ISO time. */
export const sinceParam = z.union([
  // At most six digits: far enough back for any log, near enough to stay a date.
  z.string().regex(/^[0-9]{1,6}[smhd]$/).transform((s) => new Date(Date.now() - Number(s.slice(0, -1)) * UNIT_MS[s.slice(-1) as keyof typeof UNIT_MS])),
  z.iso.datetime({ offset: true }).transform((s) => new Date(s)),
], { error: "a duration like 30m, 24h, 7d, or an ISO time" });

/** A page's end: the last row's time and id (ties in time are ordered by id), opaque to callers. */
const cursorOf = (row: { at: Date; id: string }) => Buffer.from(JSON.stringify([row.at.toISOString(), row.id])).toString("base64url");
const auditCursor = z
  .string()
  .max(200)
  .regex(/^[A-Za-z0-9_-]+$/)
  .transform((s, ctx) => {
    try {
      const [at, id] = z.tuple([z.iso.datetime(), z.string().max(100)]).parse(JSON.parse(Buffer.from(s, "base64url").toString("utf8")));
      return { at: new Date(at), id };
    } catch {
      ctx.addIssue({ code: "custom", message: "not a cursor this API gave (a page's `next`)" });
      return z.NEVER;
    }
  });

export const auditQuery = z.object({
  since: sinceParam.default(() => new Date(Date.now() - UNIT_MS.d)),
  limit: z.coerce.number().int().min(1).max(10_000).default(1000),
  /** admin: changes made; mcp: tool calls through /mcp (gateway/mcp/audit.ts); neither: both. */
  source: z.enum(["admin", "mcp"]).optional(),
  order: z.enum(["asc", "desc"]).default("asc").describe("asc: oldest first (the default); desc: newest first"),
  cursor: auditCursor.optional().describe("the previous page's `next`: the page after it, in the same order"),
});

export function auditRoutes(db: PrismaClient): Router {
  const r = Router();
  r.get("/audit", async (req, res) => {
    const q = check(auditQuery, req.query);
    const action = q.source === "mcp" ? MCP_AUDIT_ACTION : q.source === "admin" ? { not: MCP_AUDIT_ACTION } : undefined;
    const past = q.order === "asc" ? "gt" : "lt";
    const after = q.cursor && { OR: [{ at: { [past]: q.cursor.at } }, { at: q.cursor.at, id: { [past]: q.cursor.id } }] };
    const rows = await db.auditEvent.findMany({
      where: { AND: [{ at: { gte: q.since } }, ...(action !== undefined ? [{ action }] : []), ...(after ? [after] : [])] },
      orderBy: [{ at: q.order }, { id: q.order }],
      take: q.limit + 1,
    });
    // One row past the page says whether there is a next one.
    const page = rows.slice(0, q.limit);
    res.json({ data: page, next: rows.length > q.limit ? cursorOf(page.at(-1)!) : null });
  });
  return r;
}
