// The registered servers, read from the store at each list and call (a registration counts at
// once, on every gateway), each with its upstream kept while its registration is unchanged, and
// its tool list kept a few seconds. A server whose (shared) breaker is open lists no tools.
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { PrismaClient } from "../../common/db.ts";
import { log } from "../../common/logging.ts";
import type { ServerBreakers } from "./breaker.ts";
import { OpenApiUpstream } from "./openapi-upstream.ts";
import { SdkUpstream } from "./sdk-upstream.ts";
import { specOf, type McpServerSpec } from "./spec.ts";
import { UpstreamFailure, type Upstream } from "./upstream.ts";

const TOOLS_TTL_MS = 5_000;
/** A list waits this long at most for one server; a slow one is left out of that list. */
const LIST_TIMEOUT_MS = 10_000;

interface Held {
  version: number;
  spec: McpServerSpec;
  upstream: Upstream;
  tools?: { until: number; list: Tool[] };
}

/** How a server is reached, by its kind. */
export function upstreamOf(spec: McpServerSpec, stdioLifetimeMs: number): Upstream {
  return spec.kind === "openapi" ? new OpenApiUpstream(spec) : new SdkUpstream(spec, { lifetimeMs: stdioLifetimeMs, server: spec.name });
}

export class McpCatalog {
  private held = new Map<string, Held>();

  constructor(
    private readonly db: PrismaClient,
    private readonly breakers: ServerBreakers,
    private readonly stdioLifetimeMs: number,
  ) {}

  private upstreamFor(spec: McpServerSpec): Upstream {
    return upstreamOf(spec, this.stdioLifetimeMs);
  }

  /** Every registered server, its upstream made anew where the registration changed. */
  async servers(): Promise<Held[]> {
    const rows = await this.db.mcpServer.findMany({ orderBy: { name: "asc" } });
    const seen = new Set<string>();
    const out: Held[] = [];
    for (const row of rows) {
      seen.add(row.name);
      let h = this.held.get(row.name);
      if (!h || h.version !== row.updatedAt.getTime()) {
        // A changed registration starts with a closed breaker (one first seen keeps the shared one).
        if (h) await this.breakers.forget(row.name);
        void h?.upstream.close();
        const spec = specOf(row);
        h = { version: row.updatedAt.getTime(), spec, upstream: this.upstreamFor(spec) };
        this.held.set(row.name, h);
      }
      out.push(h);
    }
    for (const [name, h] of this.held)
      if (!seen.has(name)) {
        this.held.delete(name);
        void h.upstream.close();
      }
    return out;
  }

  async server(name: string): Promise<Held | undefined> {
    return (await this.servers()).find((h) => h.spec.name === name);
  }

  /** The server's tools, or none while it is out or when it fails to list them. */
  async tools(h: Held): Promise<Tool[]> {
    const name = h.spec.name;
    if ((await this.breakers.outFor(name)) > 0) return [];
    if (h.tools && h.tools.until > Date.now()) return h.tools.list;
    try {
      const list = await h.upstream.listTools(Math.min(h.spec.timeoutMs, LIST_TIMEOUT_MS));
      h.tools = { until: Date.now() + TOOLS_TTL_MS, list };
      await this.breakers.succeeded(name);
      return list;
    } catch (err) {
      await this.breakers.failed(name, (err as Error).message);
      log.warn("MCP server's tools not listed", { server: name, error: err instanceof UpstreamFailure ? err.message : String(err) });
      return [];
    }
  }

  async close(): Promise<void> {
    const all = [...this.held.values()];
    this.held.clear();
    await Promise.all(all.map((h) => h.upstream.close()));
  }
}
