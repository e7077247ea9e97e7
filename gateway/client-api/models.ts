// GET /v1/models and /v1/models/{id}: OpenAI's model object, plus what a client needs to size its
// requests — loaded or not, context length, longest answer, licence. Answered from the registry's
// memory (the catalog it refreshes every few seconds), never from the store.
import express, { type NextFunction, type Response } from "express";
import { modelAllowed } from "../auth/key-cache.ts";
import type { EndpointRegistry } from "../router/registry.ts";
import { ApiError } from "../errors.ts";
import type { Authed } from "./context.ts";

export interface ModelObject {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
  /** Has ready replicas: a request now is answered, not a 503. */
  loaded: boolean;
  replicas: number;
  context_length: number | null;
  max_output: number | null;
  licence: string | null;
}

export function describeModel(registry: EndpointRegistry, id: string): ModelObject {
  const entry = registry.catalogEntry(id);
  const limits = registry.limits(id);
  const replicas = registry.endpoints(id).length;
  return {
    id,
    object: "model",
    created: entry?.createdAt ?? 0,
    owned_by: entry?.owner ?? "llmgw",
    loaded: replicas > 0,
    replicas,
    context_length: limits?.contextLength ?? null,
    max_output: limits?.maxOutput ?? null,
    licence: entry?.licence ?? null,
  };
}

export function modelRoutes(registry: EndpointRegistry): express.Router {
  const r = express.Router();
  // Only the models this key may use: the others would answer 403 anyway.
  r.get("/models", (req: Authed, res: Response) => {
    const data = registry.knownModels().filter((id) => modelAllowed(req.key!.models, id)).map((id) => describeModel(registry, id));
    res.json({ object: "list", data });
  });
  r.get("/models/:id", (req: Authed, res: Response, next: NextFunction) => {
    const id = String(req.params.id);
    if (!registry.known(id)) return next(new ApiError("not_found", `model '${id}' does not exist`, { param: "model", code: "model_not_found" }));
    if (!modelAllowed(req.key!.models, id)) return next(new ApiError("permission", `this key may not use model '${id}'`, { param: "model", code: "model_not_allowed" }));
    res.json(describeModel(registry, id));
  });
  return r;
}
