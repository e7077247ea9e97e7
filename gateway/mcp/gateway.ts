// The MCP gateway's parts put together for the gateway process (gateway/server.ts), and the node
// listener that sends /mcp to it ahead of the client API's hot path and express app.
import type { RequestListener } from "node:http";
import type { Redis } from "ioredis";
import type { Registry } from "prom-client";
import type { PrismaClient } from "../../common/db.ts";
import type { KeyCache } from "../auth/key-cache.ts";
import type { GuardService } from "../guard/service.ts";
import { ServerBreakers } from "./breaker.ts";
import { McpCatalog } from "./catalog.ts";
import { isMcpPath, McpHttp } from "./http.ts";
import { McpMetrics } from "./metrics.ts";

export interface McpGatewayOptions {
  db: PrismaClient;
  redis: Redis;
  keys: KeyCache;
  guard: GuardService | null;
  metrics: Registry;
  breakerMs: number;
  stdioLifetimeMs: number;
}

export interface McpGateway {
  http: McpHttp;
  close(): Promise<void>;
}

export function startMcp(o: McpGatewayOptions): McpGateway {
  const breakers = new ServerBreakers(o.breakerMs);
  const catalog = new McpCatalog(o.db, breakers, o.stdioLifetimeMs);
  const http = new McpHttp({ db: o.db, redis: o.redis, catalog, breakers, metrics: new McpMetrics(o.metrics), guard: o.guard, maxArgsBytes: 1024 * 1024, maxAnswerBytes: 4 * 1024 * 1024 }, o.keys);
  return {
    http,
    async close() {
      await http.close();
      await catalog.close();
    },
  };
}

/** /mcp to the MCP gateway, everything else on to `next`. */
export function withMcp(mcp: McpGateway, next: RequestListener): RequestListener {
  return (req, res) => (isMcpPath(req.url) ? mcp.http.handle(req, res) : next(req, res));
}
