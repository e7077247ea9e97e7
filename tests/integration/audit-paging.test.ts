// GET /audit a page at a time (gateway/admin-api/audit.ts) on the real store: oldest or newest
// first, each event exactly once across the pages, events of the same millisecond ordered by id
// (so none falls between two pages), the span and source still applied, and a cursor the API did
// not give refused naming the field.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import express from "express";
import { loadConfig } from "../../common/config.ts";
import { closePrisma, prisma, type PrismaClient } from "../../common/db.ts";
import { migrate } from "../../common/migrate.ts";
import { auditRoutes } from "../../gateway/admin-api/audit.ts";
import { adminErrorHandler } from "../../gateway/admin-api/errors.ts";
import { MCP_AUDIT_ACTION } from "../../gateway/mcp/audit.ts";

let db: PrismaClient;
let server: ReturnType<express.Express["listen"]>;
let base: string;
const target = `paging-${randomUUID()}`;
// In the future, so a span from it holds these events only (other tests' are written now).
const t0 = Date.UTC(2090, 0, 1);
const ids: string[] = [];

before(async () => {
  const url = loadConfig().databaseUrl;
  await migrate(url);
  db = prisma(url);
  // Seven events: three of them in one millisecond, one an MCP tool call.
  const ats = [0, 1000, 1000, 1000, 2000, 3000, 4000];
  for (const [i, ms] of ats.entries()) {
    const id = `${String(i).padStart(2, "0")}-${randomUUID()}`;
    ids.push(id);
    await db.auditEvent.create({ data: { id, at: new Date(t0 + ms), actor: "test", action: i === 5 ? MCP_AUDIT_ACTION : "thing.change", target } });
  }
  const app = express();
  app.use("/api/v1", auditRoutes(db));
  app.use(adminErrorHandler);
  server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/audit`;
});
after(async () => {
  server?.close();
  await db.auditEvent.deleteMany({ where: { target } });
  await closePrisma();
});

async function all(query: string): Promise<{ ids: string[]; pages: number }> {
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r: Response = await fetch(`${base}?since=${new Date(t0).toISOString()}&limit=2&${query}${cursor ? `&cursor=${cursor}` : ""}`);
    assert.equal(r.status, 200, await r.clone().text());
    const body = (await r.json()) as { data: { id: string; target: string }[]; next: string | null };
    assert.ok(body.data.length <= 2);
    seen.push(...body.data.map((e) => e.id));
    cursor = body.next;
    pages++;
  } while (cursor && pages < 50);
  return { ids: seen, pages };
}

test("pages oldest first or newest first, each event once, ties in time by id", async () => {
  const asc = await all("order=asc");
  assert.deepEqual(asc.ids, ids);
  assert.equal(asc.pages, 4, "7 events at 2 a page");
  const desc = await all("order=desc");
  assert.deepEqual(desc.ids, [...ids].reverse());
  assert.deepEqual((await all("order=desc&source=mcp")).ids, [ids[5]]);
  assert.deepEqual((await all("order=asc&source=admin")).ids, ids.filter((_, i) => i !== 5));
});

test("a cursor the API did not give is refused, naming the field", async () => {
  for (const bad of ["not-a-cursor", Buffer.from('["yesterday","x"]').toString("base64url"), "%00"]) {
    const r = await fetch(`${base}?cursor=${bad}`);
    assert.equal(r.status, 400, bad);
    assert.equal(((await r.json()) as { error: { field: string } }).error.field, "cursor");
  }
});
