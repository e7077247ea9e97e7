// The admin API, /api/v1: on its own port (loopback by default), behind the admin token.
import { guardRoutes } from "./guard.ts";
import { timingSafeEqual } from "node:crypto";
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

export function adminApi(opts: { db: PrismaClient; redis: Redis; temporal: Client; taskQueue: string; adminToken: string; registry?: EndpointRegistry; notifier: Notifier }): express.Express {
  const app = express();
  app.disable("x-powered-by");
  const want = Buffer.from(`Bearer ${opts.adminToken}`);
  app.get("/health", (_req, res) => void res.json({ ok: true }));
  app.use("/api/v1", (req, _res, next) => {
    const got = Buffer.from(req.headers.authorization ?? "");
    if (got.length !== want.length || !timingSafeEqual(got, want)) return next(new AdminError(401, "missing or wrong admin token"));
    next();
  });
  // After the token: the methods of /api/v1 are behind it, as its document is.
  app.use(methodGuard(adminOperations, (req, res, next) => next(new AdminError(405, `${req.method} is not allowed on ${req.path}; allowed: ${String(res.getHeader("allow"))}`))));
  app.use("/api/v1", express.json({ limit: "1mb" }));
  // PostgreSQL's text and jsonb cannot keep U+0000: refused here, before anything is stored.
  app.use("/api/v1", (req, _res, next) => next(holdsNul(req.body) ? new AdminError(400, "the body holds U+0000, which no name or text may") : undefined));
  app.get("/api/v1/openapi.json", serveAdminOpenApi);
  app.use("/api/v1", nodeRoutes(opts.db, opts.temporal, opts.taskQueue));
  app.use("/api/v1", catalogRoutes(opts.db, opts.temporal));
  app.use("/api/v1", comfyWorkflowRoutes(opts.db));
  app.use("/api/v1", modelRoutes(opts.db, opts.temporal, opts.taskQueue));
  app.use("/api/v1", modelSettingsRoutes(opts.db, opts.temporal));
  app.use("/api/v1", operationRoutes(opts.temporal));
  app.use("/api/v1", orgRoutes(opts.db));
  app.use("/api/v1", tenancyRoutes(opts.db, opts.redis));
  app.use("/api/v1", priceRoutes(opts.db));
  app.use("/api/v1", limitRoutes(opts.db));
  app.use("/api/v1", usageRoutes(opts.db));
  app.use("/api/v1", auditRoutes(opts.db));
  app.use("/api/v1", slurmRoutes(opts.db, opts.temporal, opts.taskQueue));
  app.use("/api/v1", trainingRoutes(opts.db, opts.temporal, opts.taskQueue));
  app.use("/api/v1", trainingPublishRoutes(opts.db, opts.temporal, opts.taskQueue));
  if (opts.registry) app.use("/api/v1", explainRoutes(opts.registry));
  app.use("/api/v1", notificationRoutes(opts.notifier));
  app.use("/api/v1", guardRoutes(opts.db, opts.redis));
  app.use("/api/v1", batchAdminRoutes(opts.db, opts.temporal));
  // Every other path is a JSON 404 too: never Express's HTML page.
  app.use((req, _res, next) => next(new AdminError(404, `no route ${req.method} ${req.originalUrl}`)));
  app.use(adminErrorHandler);
  return app;
}

const holdsNul = (v: unknown): boolean =>
  typeof v === "string" ? v.includes("\u0000") : Array.isArray(v) ? v.some(holdsNul) : !!v && typeof v === "object" && Object.entries(v).some(([k, x]) => k.includes("\u0000") || holdsNul(x));
