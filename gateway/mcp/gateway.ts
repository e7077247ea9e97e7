// The MCP gateway's parts put together for the gateway process (gateway/server.ts), and the node
// listener that sends /mcp to it ahead of the client API's hot path and express app.
import type { RequestListener } from "node:http";
import type { Redis } from "ioredis";
import type { Registry } from "prom-client";
import type { PrismaClient } from "../../common/db.ts";
import type { KeyCache } from "../auth/key-cache.ts";
import type { GuardService } from "../guard/service.ts";
import type { IdentityProviders } from "../people/sign-in-settings.ts";
import type { AdminReads } from "./admin-tools.ts";
import { ServerBreakers } from "./breaker.ts";
import { McpCatalog } from "./catalog.ts";
import { isMcpPath, McpHttp } from "./http.ts";
import type { MediaDeps } from "./media-tools.ts";
import { McpMetrics } from "./metrics.ts";
import { McpOAuth, METADATA_PATH } from "./oauth.ts";
import { OwnTools } from "./own.ts";

export interface McpGatewayOptions {
  db: PrismaClient;
  redis: Redis;
  keys: KeyCache;
  guard: GuardService | null;
  metrics: Registry;
  breakerMs: number;
  stdioLifetimeMs: number;
  /** The admin API's reads, for llmgw-admin (null: none). */
  admin: AdminReads | null;
  /** Jobs, for llmgw's media tools (null: none). */
  media: MediaDeps | null;
  /** The identity providers whose access tokens /mcp takes, and this resource's URL (the public URL's /mcp). */
  oauth: { providers: IdentityProviders; resource: () => URL } | null;
}

export interface McpGateway {
  http: McpHttp;
  close(): Promise<void>;
}

export function startMcp(o: McpGatewayOptions): McpGateway {
  const breakers = new ServerBreakers(o.redis, o.breakerMs);
  const catalog = new McpCatalog(o.db, breakers, o.stdioLifetimeMs);
  const own = new OwnTools({ db: o.db, admin: o.admin, media: o.media });
  const oauth = o.oauth ? new McpOAuth(o.db, o.oauth.providers, o.oauth.resource) : null;
  const http = new McpHttp({ db: o.db, redis: o.redis, catalog, breakers, own, metrics: new McpMetrics(o.metrics), guard: o.guard, maxArgsBytes: 1024 * 1024, maxAnswerBytes: 4 * 1024 * 1024 }, o.keys, oauth?.enabled ? oauth : null);
  return {
    http,
    async close() {
      await http.close();
      await catalog.close();
    },
  };
}

/** /mcp and its protected-resource metadata to the MCP gateway, everything else on to `next`. */
export function withMcp(mcp: McpGateway, next: RequestListener): RequestListener {
  return (req, res) => (isMcpPath(req.url) ? mcp.http.handle(req, res) : req.url?.startsWith(METADATA_PATH) ? mcp.http.metadata(req, res, next) : next(req, res));
}
