// The admin API, /api/v1: on its own port (loopback by default), behind the admin token or a
// person's session (gateway/admin-api/principal.ts), each route open to the roles
// gateway/admin-api/roles.ts names. The gateway mounts it on the client port too, for people only.
import { guardRoutes } from "./guard.ts";
import { mcpServerRoutes } from "./mcp-servers.ts";
import { scimTokenRoutes } from "./scim-tokens.ts";
import { guardJudgeRoutes } from "./guard-judge.ts";
import express from "express";
import type { Client } from "@temporalio/client";
import type { Redis } from "ioredis";
import type { PrismaClient } from "../../common/db.ts";
import { adminErrorHandler, AdminError } from "./errors.ts";
import { catalogRoutes } from "./catalog.ts";
import { comfyWorkflowRoutes } from "./comfy-workflows.ts";
import { modelRoutes } from "./models.ts";
import { modelSettingsRoutes } from "./model-settings.ts";
import { nodeRoutes } from "./nodes.ts";
import { operationRoutes } from "./operations.ts";
import { tenancyRoutes } from "./tenancy.ts";
import { orgRoutes } from "./orgs.ts";
import { auditRoutes } from "./audit.ts";
import { batchAdminRoutes } from "./batches.ts";
import { limitRoutes } from "./limits.ts";
import { priceRoutes } from "./prices.ts";
import { cacheRoutes } from "./cache.ts";
import { usageRoutes } from "./usage.ts";
import { slurmRoutes } from "./slurm.ts";
import { trainingRoutes } from "./training.ts";
import { trainingPublishRoutes } from "./training-publish.ts";
import { explainRoutes } from "./explain.ts";
import { notificationRoutes } from "./notifications.ts";
import { adminOperations, serveAdminOpenApi } from "./openapi.ts";
import { methodGuard } from "../http/method-guard.ts";
import type { EndpointRegistry } from "../router/registry.ts";
import type { Notifier } from "../../common/notifier.ts";
import { SessionStore } from "../people/sessions.ts";
import { actorScope, principalMiddleware } from "./principal.ts";
import { authorize } from "./authorize.ts";
import { peopleRoutes } from "./people.ts";
import { groupMappingRoutes } from "./group-mappings.ts";
import { engineLogRoutes, type AgentFor } from "./engine-logs.ts";
import { meRoutes } from "./me.ts";

export interface AdminApiOptions {
  db: PrismaClient;
  redis: Redis;
  temporal: Client;
  taskQueue: string;
  /** The break-glass token; null where it must not work (the client port: sessions only). */
  adminToken: string | null;
  registry?: EndpointRegistry;
  notifier: Notifier;
  /** A node's agent, for an engine's log; without it that route answers 503. */
  agentFor?: AgentFor;
  /** People's sessions (default: over `redis` with the default timeouts). */
  sessions?: SessionStore;
}

export function adminApi(opts: AdminApiOptions): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.get("/health", (_req, res) => void res.json({ ok: true }));
  app.use("/api/v1", principalMiddleware({ db: opts.db, sessions: opts.sessions ?? new SessionStore(opts.redis), adminToken: opts.adminToken }));
  // After the token: the methods of /api/v1 are behind it, as its document is.
  app.use(methodGuard(adminOperations, (req, res, next) => next(new AdminError(405, `${req.method} is not allowed on ${req.path}; allowed: ${String(res.getHeader("allow"))}`))));
  app.use("/api/v1", express.json({ limit: "1mb" }));
  // PostgreSQL's text and jsonb cannot keep U+0000: refused here, before anything is stored.
  app.use("/api/v1", (req, _res, next) => next(holdsNul(req.body) ? new AdminError(400, "the body holds U+0000, which no name or text may") : undefined));
  app.use("/api/v1", actorScope);
  app.use(authorize(adminOperations));
  app.get("/api/v1/openapi.json", serveAdminOpenApi);
  app.use("/api/v1", nodeRoutes(opts.db, opts.temporal, opts.taskQueue));
  app.use("/api/v1", catalogRoutes(opts.db, opts.temporal));
  app.use("/api/v1", comfyWorkflowRoutes(opts.db));
  app.use("/api/v1", modelRoutes(opts.db, opts.temporal, opts.taskQueue));
  app.use("/api/v1", modelSettingsRoutes(opts.db, opts.temporal));
  app.use("/api/v1", operationRoutes(opts.temporal, opts.taskQueue));
  app.use("/api/v1", engineLogRoutes(opts.db, opts.agentFor));
  app.use("/api/v1", orgRoutes(opts.db));
  app.use("/api/v1", tenancyRoutes(opts.db, opts.redis));
  app.use("/api/v1", priceRoutes(opts.db));
  app.use("/api/v1", cacheRoutes(opts.db, opts.redis));
  app.use("/api/v1", limitRoutes(opts.db));
  app.use("/api/v1", usageRoutes(opts.db));
  app.use("/api/v1", auditRoutes(opts.db));
  app.use("/api/v1", slurmRoutes(opts.db, opts.temporal, opts.taskQueue));
  app.use("/api/v1", trainingRoutes(opts.db, opts.temporal, opts.taskQueue));
  app.use("/api/v1", trainingPublishRoutes(opts.db, opts.temporal, opts.taskQueue));
  if (opts.registry) app.use("/api/v1", explainRoutes(opts.registry), guardJudgeRoutes(opts.registry));
  app.use("/api/v1", notificationRoutes(opts.notifier));
  app.use("/api/v1", guardRoutes(opts.db, opts.redis));
  app.use("/api/v1", mcpServerRoutes(opts.db));
  app.use("/api/v1", peopleRoutes(opts.db, opts.redis));
  app.use("/api/v1", groupMappingRoutes(opts.db));
  app.use("/api/v1", meRoutes(opts.db, opts.redis));
  app.use("/api/v1", scimTokenRoutes(opts.db));
  app.use("/api/v1", batchAdminRoutes(opts.db, opts.temporal));
  // Every other path is a JSON 404 too: never Express's HTML page.
  app.use((req, _res, next) => next(new AdminError(404, `no route ${req.method} ${req.originalUrl}`)));
  app.use(adminErrorHandler);
  return app;
}

const holdsNul = (v: unknown): boolean =>
  typeof v === "string" ? v.includes("\u0000") : Array.isArray(v) ? v.some(holdsNul) : !!v && typeof v === "object" && Object.entries(v).some(([k, x]) => k.includes("\u0000") || holdsNul(x));
