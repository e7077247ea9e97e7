// The usage report: the ledger summed by any of project, model, key and day over a time range.
import { Router } from "express";
import { z } from "zod";
import { toCsv } from "../../common/csv.ts";
import { Prisma, type PrismaClient } from "../../common/db.ts";
import { check } from "./errors.ts";
import { usageReach } from "./scope.ts";

// The ledger's times are UTC without a zone (as Prisma writes them), so bounds are given the same way.
// The only SQL put together from input: whitelisted expressions, chosen by name.
const DIMENSIONS = {
  project: Prisma.sql`COALESCE(p.name, u.project_id)`,
  model: Prisma.sql`u.model`,
  key: Prisma.sql`u.key_id`,
  day: Prisma.sql`to_char(date_trunc('day', u.at), 'YYYY-MM-DD')`,
} as const;
type Dimension = keyof typeof DIMENSIONS;
const DIMENSION_NAMES = Object.keys(DIMENSIONS) as Dimension[];

const time = z.union([z.iso.datetime({ offset: true }), z.iso.date()]).transform((s) => new Date(s));
export const usageQuery = z.object({
  by: z
    .string()
    .default("project,model")
    .transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean))
    .pipe(z.array(z.enum(DIMENSION_NAMES, { error: `each of: ${DIMENSION_NAMES.join(", ")}` })).max(4)),
  from: time.optional(),
  to: time.optional(),
  format: z.enum(["json", "csv"]).default("json"),
});

export const USAGE_MEASURES = ["requests", "promptTokens", "cachedTokens", "completionTokens", "cost"] as const;

export function usageRoutes(db: PrismaClient): Router {
  const r = Router();
  r.get("/usage", async (req, res) => {
    const q = check(usageQuery, req.query);
    // An org-admin or viewer sees the rows of the projects they reach, and no one else's.
    const reach = await usageReach(db, req);
    const reached = reach.all ? Prisma.empty : Prisma.sql`AND u.project_id = ANY(${[...reach.projectIds]}::text[])`;
    const by = [...new Set(q.by)];
    const to = q.to ?? new Date();
    const from = q.from ?? new Date(to.getTime() - 30 * 86_400_000);
    const select = by.map((d) => Prisma.sql`${DIMENSIONS[d]} AS ${Prisma.raw(`"${d}"`)}`);
    const rows = await db.$queryRaw<Record<string, unknown>[]>`
      SELECT ${Prisma.join([...select, Prisma.sql`count(*)::bigint AS requests`], ", ")},
             COALESCE(sum(u.prompt_tokens), 0)::bigint AS "promptTokens",
             COALESCE(sum(u.cached_tokens), 0)::bigint AS "cachedTokens",
             COALESCE(sum(u.completion_tokens), 0)::bigint AS "completionTokens",
             COALESCE(sum(u.cost_micros), 0)::bigint AS "costMicros"
        FROM usage_events u LEFT JOIN projects p ON p.id = u.project_id
       WHERE u.at >= ${from.toISOString()}::timestamp AND u.at < ${to.toISOString()}::timestamp ${reached}
       ${by.length ? Prisma.sql`GROUP BY ${Prisma.join(by.map((d) => DIMENSIONS[d]), ", ")} ORDER BY ${Prisma.join(by.map((d) => DIMENSIONS[d]), ", ")}` : Prisma.empty}`;
    const data = rows.map((row) => ({
      ...Object.fromEntries(by.map((d) => [d, row[d] ?? null])),
      requests: Number(row.requests),
      promptTokens: Number(row.promptTokens),
      cachedTokens: Number(row.cachedTokens),
      completionTokens: Number(row.completionTokens),
      costMicros: Number(row.costMicros),
      cost: Number(row.costMicros) / 1_000_000,
    }));
    if (q.format === "csv") return void res.type("text/csv").send(toCsv([...by, ...USAGE_MEASURES], data));
    res.json({ from, to, by, data });
  });
  return r;
}
