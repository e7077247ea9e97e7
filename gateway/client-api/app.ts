// The client API, /v1, except inference: the models list, count_tokens, files, jobs, the API's
// description, and JSON 404s and 405s. The inference routes (chat, completions, embeddings,
// messages, responses) are served without express by ./hot-path.ts, which the gateway puts in front of this
// app; a request to one of them with another method still comes here, for its 405 with Allow.
import type { IncomingMessage, ServerResponse } from "node:http";
import express, { type NextFunction, type Request, type Response } from "express";
import { anthropicRoutes } from "./anthropic/routes.ts";
import { responsesRoutes } from "./responses/routes.ts";
import { moderationRoutes } from "./moderations.ts";
import { audioRoutes } from "./audio.ts";
import { speechRoutes } from "./speech.ts";
import { authenticate } from "./authenticate.ts";
import { ApiError } from "../errors.ts";
import { answerError } from "./errors.ts";
import { requestIdOf, type Authed, type ClientApiDeps } from "./context.ts";
import { jsonBody } from "./json-body.ts";
import { batchRoutes } from "./batches.ts";
import { filesRoutes } from "./files.ts";
import { imageRoutes } from "./images.ts";
import { modelRoutes } from "./models.ts";
import { methodGuard } from "../http/method-guard.ts";
import { clientOperations, serveClientOpenApi } from "./openapi.ts";
import { swaggerUi } from "./swagger-ui.ts";
import { consoleStatic } from "../http/console-static.ts";
import { meshRoutes } from "./jobs-3d.ts";
import { workflowRunRoutes } from "./workflow-runs.ts";
import { scimRoutes } from "../scim/routes.ts";
import { SCIM_BASE } from "../scim/resources.ts";

/** Gives the request its id and echoes it on whatever answer follows. */
export function assignRequestId(req: IncomingMessage & { requestId?: string }, res: ServerResponse): void {
  req.requestId = requestIdOf(req);
  res.setHeader("x-request-id", req.requestId);
}

export function clientApi(deps: ClientApiDeps): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);

  app.use((req: Authed, res, next) => {
    assignRequestId(req, res);
    next();
  });
  // Before the key is checked: which methods a path takes is in the public document anyway.
  app.use(methodGuard(clientOperations, (req, res, next) => next(new ApiError("method_not_allowed", `${req.method} is not allowed on ${req.path}; allowed: ${String(res.getHeader("allow"))}`, { code: "method_not_allowed" }))));
  app.get("/health", (_req, res) => void res.json({ ok: true }));
  // SCIM answers in its own error shape and behind its own token (docs/people.md, "SCIM").
  if (deps.scim) app.use(SCIM_BASE, scimRoutes(deps.scim));
  // The API's description needs no key: Swagger UI and code generators read it first.
  app.get("/v1/openapi.json", serveClientOpenApi);
  app.use("/docs/api", swaggerUi("/v1/openapi.json"));
  // The web console (static files; everything it shows comes from /api/v1 and /v1).
  app.use("/console", consoleStatic());
  app.use("/v1", jsonBody(deps.bodyLimitBytes));
  app.use("/v1", (req: Authed, _res, next) => {
    authenticate(deps.keys, req.headers).then((info) => {
      req.key = info;
      next();
    }, next);
  });

  app.use("/v1", modelRoutes(deps.registry));

  app.use("/v1", anthropicRoutes(deps));
  app.use("/v1", responsesRoutes(deps));
  app.use("/v1", moderationRoutes(deps), audioRoutes(deps), speechRoutes(deps));
  // Picture, 3D and ComfyUI jobs, and the files they read and write.
  if (deps.jobs) app.use("/v1", filesRoutes(deps.jobs), imageRoutes(deps.jobs, deps.limits, deps.guard), meshRoutes(deps.jobs, deps.limits), workflowRunRoutes(deps.jobs, deps.limits), batchRoutes(deps.jobs));

  if (deps.auth) app.use("/auth", deps.auth);

  // Every other path, in or out of /v1, is a JSON 404: never Express's HTML page.
  app.use((req, _res, next) => next(new ApiError("not_found", `no route ${req.method} ${req.originalUrl}`, { code: "unknown_route" })));
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => answerError(req, res, err));
  return app;
}
