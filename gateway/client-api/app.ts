// The client API, /v1: the hot path. Validate, authenticate from the cache, route, proxy, record
// usage — no database round trip and no Temporal call on the way.
import { randomUUID } from "node:crypto";
import express, { type NextFunction, type Request, type Response } from "express";
import type { z } from "zod";
import { log } from "../../common/logging.ts";
import { keyFromHeaders, type KeyCache, type KeyInfo } from "../auth/key-cache.ts";
import type { Limiter } from "../auth/limiter.ts";
import type { Registry } from "../router/registry.ts";
import type { Waker } from "../router/wake.ts";
import type { UsageRecorder } from "../usage/recorder.ts";
import type { GatewayMetrics } from "../metrics.ts";
import { anthropicRoutes } from "./anthropic/routes.ts";
import { ApiError, sendError } from "./errors.ts";
import { forward } from "./forward.ts";
import { jsonBody } from "./json-body.ts";
import { filesRoutes } from "./files.ts";
import { imageRoutes } from "./images.ts";
import { modelRoutes } from "./models.ts";
import { serveClientOpenApi } from "./openapi.ts";
import { swaggerUi } from "./swagger-ui.ts";
import { meshRoutes } from "./jobs-3d.ts";
import { workflowRunRoutes } from "./workflow-runs.ts";
import type { JobsDeps } from "../jobs/service.ts";
import { chatCompletionRequest, completionRequest, embeddingRequest, firstIssue } from "./schemas.ts";

export interface ClientApiDeps {
  keys: KeyCache;
  limits: Limiter;
  registry: Registry;
  usage: UsageRecorder;
  metrics: GatewayMetrics;
  bodyLimitBytes: number;
  /** Wakes on-demand models and notes their last request; without it they answer 503 while asleep. */
  waker?: Waker;
  /** The job routes need the store and Temporal; without them they are not served. */
  jobs?: JobsDeps;
}

type Authed = Request & { key?: KeyInfo; requestId?: string };

export function clientApi(deps: ClientApiDeps): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);

  app.use((req: Authed, res, next) => {
    const given = req.headers["x-request-id"];
    req.requestId = typeof given === "string" && given.length <= 128 ? given : randomUUID();
    res.setHeader("x-request-id", req.requestId);
    next();
  });
  app.get("/health", (_req, res) => void res.json({ ok: true }));
  // The API's description needs no key: Swagger UI and code generators read it first.
  app.get("/v1/openapi.json", serveClientOpenApi);
  app.use("/docs/api", swaggerUi("/v1/openapi.json"));
  app.use("/v1", jsonBody(deps.bodyLimitBytes));
  app.use("/v1", (req: Authed, _res, next) => {
    const key = keyFromHeaders(req.headers);
    if (!key) return next(new ApiError("authentication", "no API key: send it as `Authorization: Bearer <key>` or `x-api-key`", { code: "missing_api_key" }));
    deps.keys.lookup(key).then(
      (info) => {
        if (!info) return next(new ApiError("authentication", "invalid API key", { code: "invalid_api_key" }));
        if (info.revoked) return next(new ApiError("authentication", "this API key was revoked", { code: "revoked_api_key" }));
        if (info.expiresAt !== null && info.expiresAt <= Date.now()) return next(new ApiError("authentication", "this API key has expired", { code: "expired_api_key" }));
        req.key = info;
        next();
      },
      (err) => next(err),
    );
  });

  app.use("/v1", modelRoutes(deps.registry));

  app.post("/v1/chat/completions", inference(deps, chatCompletionRequest, "/v1/chat/completions"));
  app.post("/v1/completions", inference(deps, completionRequest, "/v1/completions"));
  app.post("/v1/embeddings", inference(deps, embeddingRequest, "/v1/embeddings"));
  app.use("/v1", anthropicRoutes(deps));
  // Picture, 3D and ComfyUI jobs, and the files they read and write.
  if (deps.jobs) app.use("/v1", filesRoutes(deps.jobs), imageRoutes(deps.jobs), meshRoutes(deps.jobs), workflowRunRoutes(deps.jobs));

  app.use("/v1", (req, _res, next) => next(new ApiError("not_found", `no route ${req.method} ${req.originalUrl}`, { code: "unknown_route" })));
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return void res.end();
    const apiErr = toApiError(err);
    if (!(err instanceof ApiError) && apiErr.status >= 500) log.error("request failed inside the gateway", { requestId: (req as Authed).requestId, error: err as Error });
    sendError(req, res, apiErr);
  });
  return app;
}

function inference<S extends z.ZodType<{ model: string; stream?: boolean | undefined }>>(deps: ClientApiDeps, schema: S, path: string) {
  return async (req: Authed, res: Response, next: NextFunction) => {
    const started = performance.now();
    const parsed = schema.safeParse(req.body);
    if (!parsed.success) {
      const { message, param } = firstIssue(parsed.error);
      return next(new ApiError("invalid_request", message, { param }));
    }
    const body = parsed.data as Record<string, unknown> & { model: string; stream?: boolean; stream_options?: { include_usage?: boolean } | null };
    try {
      await forward(deps, req, res, body.model, {
        path,
        body,
        stream: body.stream === true,
        clientWantsUsage: body.stream_options?.include_usage === true,
        started,
      });
    } catch (err) {
      next(err);
    }
  };
}

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as { type?: string; status?: number; message?: string };
  if (e?.type === "entity.parse.failed") return new ApiError("invalid_request", `the body is not valid JSON: ${e.message}`, { code: "invalid_json" });
  if (e?.type === "entity.too.large") return new ApiError("too_large", "the body is larger than this gateway accepts", { code: "body_too_large" });
  if (e?.status && e.status >= 400 && e.status < 500) return new ApiError("invalid_request", e.message ?? "bad request");
  return new ApiError("upstream", "the gateway failed to handle this request", { code: "internal_error" });
}
