// /api/v1/mcp/servers: the tool servers behind /mcp (gateway/mcp/). Views never hold a credential:
// header files by path, a stdio server's environment by names only.
import { Router } from "express";
import { z } from "zod";
import { Prisma, type PrismaClient } from "../../common/db.ts";
import type { Operation } from "../http/openapi-build.ts";
import { upstreamOf } from "../mcp/catalog.ts";
import { kindOf, mcpServerBody, mcpServerName, specOf, type McpServerBody, type McpServerSpec } from "../mcp/spec.ts";
import { audit } from "./audit.ts";
import { AdminError, check } from "./errors.ts";
import { adminError, deleted } from "./openapi-responses.ts";

export const mcpServerPath = z.object({ name: mcpServerName });

const TEST_TIMEOUT_MS = 15_000;

type Row = Parameters<typeof specOf>[0] & { createdAt: Date; updatedAt: Date };

function view(row: Row) {
  const s = specOf(row);
  return {
    name: s.name,
    kind: s.kind,
    url: s.url,
    command: s.command,
    envNames: Object.keys(s.env),
    operations: s.openapi ? Object.keys((s.openapi.paths ?? {}) as object).length : null,
    headerFiles: s.headerFiles,
    timeoutMs: s.timeoutMs,
    ratePerMin: s.ratePerMin,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export const mcpServerView = z.object({
  name: z.string(),
  kind: z.enum(["http", "stdio", "openapi"]),
  url: z.string().nullable(),
  command: z.array(z.string()),
  envNames: z.array(z.string()).describe("the stdio server's environment, names only"),
  operations: z.number().int().nullable().describe("paths in the OpenAPI document"),
  headerFiles: z.record(z.string(), z.string()).describe("header name to the file it is read from at each call"),
  timeoutMs: z.number().int(),
  ratePerMin: z.number().int().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const mcpServerTest = z.object({ ok: z.boolean(), tools: z.array(z.string()), error: z.string().optional() });

async function found(db: PrismaClient, name: string): Promise<Row> {
  const row = await db.mcpServer.findUnique({ where: { name } });
  if (!row) throw new AdminError(404, `no MCP server '${name}'`, "name");
  return row;
}

/** Lists its tools over a connection of its own (the gateway's breaker and caches untouched). */
async function testServer(spec: McpServerSpec): Promise<z.infer<typeof mcpServerTest>> {
  const up = upstreamOf(spec, TEST_TIMEOUT_MS * 2);
  try {
    const tools = await up.listTools(Math.min(spec.timeoutMs, TEST_TIMEOUT_MS));
    return { ok: true, tools: tools.map((t) => `${spec.name}.${t.name}`) };
  } catch (err) {
    return { ok: false, tools: [], error: (err as Error).message };
  } finally {
    await up.close();
  }
}

export function mcpServerRoutes(db: PrismaClient): Router {
  const r = Router();
  r.get("/mcp/servers", async (_req, res) => void res.json({ data: (await db.mcpServer.findMany({ orderBy: { name: "asc" } })).map(view) }));
  r.get("/mcp/servers/:name", async (req, res) => void res.json(view(await found(db, check(mcpServerPath, req.params).name))));
  r.post("/mcp/servers", async (req, res) => {
    const b: McpServerBody = check(mcpServerBody, req.body);
    const data = { kind: kindOf(b), url: b.url ?? null, command: b.command ?? [], env: b.env ?? {}, openapi: (b.openapi as Prisma.InputJsonObject | undefined) ?? Prisma.DbNull, headerFiles: b.headerFiles ?? {}, timeoutMs: b.timeout, ratePerMin: b.ratePerMin };
    const before = await db.mcpServer.findUnique({ where: { name: b.name } });
    const row = await db.mcpServer.upsert({ where: { name: b.name }, create: { name: b.name, ...data }, update: data });
    await audit(db, { action: before ? "mcp.server.update" : "mcp.server.add", target: `mcp/${b.name}`, before: before && view(before), after: view(row) });
    res.status(before ? 200 : 201).json(view(row));
  });
  r.delete("/mcp/servers/:name", async (req, res) => {
    const before = await found(db, check(mcpServerPath, req.params).name);
    await db.mcpServer.delete({ where: { name: before.name } });
    await audit(db, { action: "mcp.server.remove", target: `mcp/${before.name}`, before: view(before) });
    res.json({ deleted: true });
  });
  r.post("/mcp/servers/:name/test", async (req, res) => void res.json(await testServer(specOf(await found(db, check(mcpServerPath, req.params).name)))));
  return r;
}

const V1 = "/api/v1";
export const mcpOperations: Operation[] = [
  { method: "get", path: `${V1}/mcp/servers`, summary: "MCP tool servers behind /mcp (no credential shown)", tag: "mcp", responses: { "200": { description: "The servers", schema: z.object({ data: z.array(mcpServerView) }) } } },
  { method: "post", path: `${V1}/mcp/servers`, summary: "Register an MCP server (url, command or openapi) or replace one by its name; a URL with a user or password is refused", tag: "mcp", request: mcpServerBody, responses: { "200": { description: "Replaced", schema: mcpServerView }, "201": { description: "Registered", schema: mcpServerView }, "400": { description: "Refused, naming the field", schema: adminError } } },
  { method: "get", path: `${V1}/mcp/servers/:name`, summary: "One MCP server", tag: "mcp", params: mcpServerPath, responses: { "200": { description: "The server", schema: mcpServerView } } },
  { method: "delete", path: `${V1}/mcp/servers/:name`, summary: "Remove an MCP server; its tools leave /mcp at once", tag: "mcp", params: mcpServerPath, responses: { "200": { description: "Removed", schema: deleted } } },
  { method: "post", path: `${V1}/mcp/servers/:name/test`, summary: "Connect to an MCP server and list its tools", tag: "mcp", params: mcpServerPath, responses: { "200": { description: "Whether it answered, and its tools", schema: mcpServerTest } } },
];
