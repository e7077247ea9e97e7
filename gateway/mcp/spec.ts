// A tool server's registration as the admin API takes it (POST /api/v1/mcp/servers) and the store
// keeps it (McpServer). Exactly one of url (Streamable HTTP), command (stdio) or openapi (a REST
// service; url is then its base URL, else the document's first server). Credentials are never in
// it: headerFiles names files on the control plane, read at each call.
import { z } from "zod";
import { durationMs } from "../../common/duration.ts";

/** Lower case, no dots: the name prefixes its tools (`jira.search`), split at the first dot. */
export const mcpServerName = z.string().regex(/^[a-z][a-z0-9_-]{0,39}$/, "a name of lower-case letters, digits, - and _, starting with a letter, at most 40 characters");

const headerName = z.string().regex(/^[A-Za-z0-9-]{1,100}$/, "an HTTP header name");

/** http(s) only, and never a user or password in it: say where credentials go instead. */
export const upstreamUrl = z.url({ protocol: /^https?$/, error: "an http:// or https:// URL" }).superRefine((u, ctx) => {
  let parsed: URL;
  try {
    parsed = new URL(u);
  } catch {
    return; // z.url() has said so already: its checks do not stop the ones after them
  }
  if (parsed.username || parsed.password)
    ctx.addIssue({ code: "custom", message: "the URL carries a user name or password; credentials are never stored or shown: put them in a file on the control plane and pass it as --header-file authorization=/path (headerFiles)" });
});

const common = {
  // llmgw's own tools are named under these (gateway/mcp/own.ts).
  name: mcpServerName.refine((n) => n !== "llmgw" && n !== "llmgw-admin", "llmgw and llmgw-admin are the names of llmgw's own tools; choose another"),
  timeout: durationMs.default(30_000),
  ratePerMin: z.number().int().min(1).max(1_000_000).nullable().default(null),
};
/** Absolute paths on the control plane; a pattern, so the document says it too. */
const headerFiles = z.record(headerName, z.string().max(4096).regex(/^\//, "an absolute path")).default({});
/** An OpenAPI 3 document; each operation becomes a tool. */
const openapiDocument = z.looseObject({ openapi: z.string().regex(/^3\./, "an OpenAPI 3 document"), paths: z.record(z.string(), z.unknown()) });

/**
 * One of three shapes, so the document says what the route takes: a Streamable HTTP server (url), a
 * stdio server (command, spawned without a shell, with env as its whole environment besides PATH:
 * nothing of the gateway's is passed on) or a REST service (openapi, url its base URL).
 */
export const mcpServerBody = z.union(
  [
    z.strictObject({ ...common, url: upstreamUrl, headerFiles }),
    z.strictObject({ ...common, command: z.array(z.string().min(1).max(4096)).min(1).max(100), env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name"), z.string().max(4096)).default({}) }),
    z.strictObject({ ...common, openapi: openapiDocument, url: upstreamUrl.optional(), headerFiles }),
  ],
  { error: (iss) => (iss.code === "invalid_union" ? "give exactly one of url (Streamable HTTP), command (stdio, with env) or openapi (with url as its base URL, optional, and headerFiles)" : undefined) },
);
/** The three shapes read as one: what a shape lacks is absent (env and headerFiles empty). */
export type McpServerBody = { name: string; url?: string; command?: string[]; env?: Record<string, string>; openapi?: z.infer<typeof openapiDocument>; headerFiles?: Record<string, string>; timeout: number; ratePerMin: number | null };

export type McpServerKind = "http" | "stdio" | "openapi";

/** What the gateway needs of a store row. */
export interface McpServerSpec {
  name: string;
  kind: McpServerKind;
  url: string | null;
  command: string[];
  env: Record<string, string>;
  openapi: Record<string, unknown> | null;
  headerFiles: Record<string, string>;
  timeoutMs: number;
  ratePerMin: number | null;
}

export function kindOf(b: McpServerBody): McpServerKind {
  return b.command ? "stdio" : b.openapi ? "openapi" : "http";
}

/** A store row as the gateway reads it (Json columns typed). */
export function specOf(row: { name: string; kind: string; url: string | null; command: string[]; env: unknown; openapi: unknown; headerFiles: unknown; timeoutMs: number; ratePerMin: number | null }): McpServerSpec {
  return {
    name: row.name,
    kind: row.kind as McpServerKind,
    url: row.url,
    command: row.command,
    env: (row.env ?? {}) as Record<string, string>,
    openapi: (row.openapi ?? null) as Record<string, unknown> | null,
    headerFiles: (row.headerFiles ?? {}) as Record<string, string>,
    timeoutMs: row.timeoutMs,
    ratePerMin: row.ratePerMin,
  };
}
