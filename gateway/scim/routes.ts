// SCIM 2.0 (RFC 7643/7644) on the client port, under /scim/v2: Users, Groups, and the discovery
// endpoints, behind a SCIM bearer token. scimmy (npm) does the protocol's hard parts: schemas and
// their validation, filters, PATCH, attribute projection, sorting and pages. The routes are our own,
// not scimmy-routers': under Express 5 `req.query` is parsed afresh on each read, so its router's
// casting of startIndex/count is lost, and it has no ETag/If-Match and turns Bulk on for the process.
import express, { Router, type NextFunction, type Request, type Response } from "express";
import SCIMMY from "scimmy";
import type { ScimCtx } from "./context.ts";
import type { ScimDeps } from "./effects.ts";
import { SCIM_CONTENT_TYPE, scimError, scimErrorHandler, sendScimError } from "./errors.ts";
import { listParams } from "./query.ts";
import { declareScim, SCIM_BASE } from "./resources.ts";
import { verifyScimBearer } from "./tokens.ts";

type Handler = (req: Request, res: Response) => Promise<void>;
const wrap = (h: Handler) => (req: Request, res: Response, next: NextFunction) => void h(req, res).catch(next);

/**
 * RFC 7644 §3.9: `schemas` and `id` are always returned; scimmy's projection (`attributes=…`) can
 * leave `schemas` out, so it is put back from the attributes the resource holds.
 */
function withSchemas(body: unknown, core: string): unknown {
  const o = body as Record<string, unknown> | null;
  if (!o || typeof o !== "object" || Array.isArray(o)) return o;
  if (Array.isArray(o.Resources)) return { ...o, Resources: o.Resources.map((r) => withSchemas(r, core)) };
  if (!("id" in o) || Array.isArray(o.schemas)) return o;
  return { schemas: [core, ...Object.keys(o).filter((k) => k.startsWith("urn:"))], ...o };
}

const sendBody = (res: Response, status: number, body: unknown, core?: string) => {
  if (core) body = withSchemas(JSON.parse(JSON.stringify(body)), core);
  const version = (body as { meta?: { version?: string } } | undefined)?.meta?.version;
  if (version) res.setHeader("etag", version);
  res.status(status).type(SCIM_CONTENT_TYPE).send(JSON.stringify(body));
};

/** If-Match (RFC 7232 §3.1): `*` asks nothing; W/"n" or "n" names a version; anything else matches none. */
function ifMatchOf(header: string | undefined): ScimCtx["ifMatch"] {
  if (header === undefined || header.trim() === "*") return undefined;
  const m = /^\s*(?:W\/)?"(\d{1,9})"\s*$/.exec(header);
  return m ? Number(m[1]) : "none";
}

/** Entra ID writes ops capitalised ("Replace") and booleans as strings ("False"); RFC 7644 wants neither. */
function normalisePatch(body: unknown): unknown {
  const ops = (body as { Operations?: unknown } | undefined)?.Operations;
  if (!Array.isArray(ops)) return body;
  const out: Record<string, unknown>[] = [];
  const bool = (v: unknown) => (v === "True" || v === "true" ? true : v === "False" || v === "false" ? false : v);
  for (const op of ops as Record<string, unknown>[]) {
    if (!op || typeof op !== "object") {
      out.push(op);
      continue;
    }
    if (typeof op.op === "string") op.op = op.op.toLowerCase();
    // A whole extension's value may come as its model, `schemas` and all; scimmy wants only its attributes.
    if (typeof op.path === "string" && op.path.startsWith("urn:") && op.value && typeof op.value === "object") delete (op.value as Record<string, unknown>).schemas;
    // scimmy cannot remove a whole extension (1.3 throws): each of its attributes is removed instead.
    const extension = typeof op.path === "string" ? EXTENSIONS.get(op.path) : undefined;
    if (op.op === "remove" && extension) {
      out.push(...extension.map((name) => ({ op: "remove", path: `${op.path as string}:${name}` })));
      continue;
    }
    if (typeof op.path === "string" && op.path.toLowerCase() === "active") op.value = bool(op.value);
    if (!op.path && op.value && typeof op.value === "object" && "active" in op.value) (op.value as Record<string, unknown>).active = bool((op.value as Record<string, unknown>).active);
    out.push(op);
  }
  return { ...(body as object), Operations: out };
}

/** Each schema extension's own attributes, by its URN. */
const EXTENSIONS = new Map(
  [SCIMMY.Schemas.EnterpriseUser.definition].map((d) => [d.id, d.attributes.map((a) => a.name).filter((n) => !["schemas", "id", "externalId", "meta"].includes(n))]),
);

type ResourceClass = typeof SCIMMY.Resources.User | typeof SCIMMY.Resources.Group;

function resourceRoutes(r: Router, path: string, R: () => ResourceClass, deps: ScimDeps): void {
  const send = (res: Response, status: number, body: unknown) => sendBody(res, status, body, R().schema.definition.id);
  const ctx = (req: Request): ScimCtx => ({ ...deps, basePath: SCIM_BASE, ifMatch: ifMatchOf(req.headers["if-match"]) });
  const def = () => R().schema.definition;
  const single = (req: Request) => listParams(def(), { attributes: req.query.attributes, excludedAttributes: req.query.excludedAttributes });
  const list = async (req: Request, res: Response, q: Record<string, unknown>) => {
    const Resource = R();
    send(res, 200, await new Resource(listParams(def(), q) as never).read(ctx(req)));
  };
  r.get(path, wrap((req, res) => list(req, res, req.query)));
  r.post(`${path}/.search`, wrap(async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!Array.isArray(body.schemas) || !body.schemas.includes("urn:ietf:params:scim:api:messages:2.0:SearchRequest")) throw scimError(400, "invalidSyntax", "a search needs schemas [urn:ietf:params:scim:api:messages:2.0:SearchRequest]");
    await list(req, res, body);
  }));
  r.get(`${path}/:id`, wrap(async (req, res) => {
    const Resource = R();
    const { count: _c, ...params } = single(req);
    const body = await new Resource(String(req.params.id), params as never).read(ctx(req));
    const version = (body as { meta?: { version?: string } }).meta?.version;
    if (version && req.headers["if-none-match"] === version) return void res.setHeader("etag", version).status(304).end();
    send(res, 200, body);
  }));
  r.post(path, wrap(async (req, res) => {
    const Resource = R();
    const { count: _c, ...params } = single(req);
    const body = (await new Resource(params as never).write(req.body, ctx(req))) as { meta?: { location?: string } };
    if (body.meta?.location) res.location(body.meta.location);
    send(res, 201, body);
  }));
  r.put(`${path}/:id`, wrap(async (req, res) => {
    const Resource = R();
    const { count: _c, ...params } = single(req);
    send(res, 200, await new Resource(String(req.params.id), params as never).write(req.body, ctx(req)));
  }));
  r.patch(`${path}/:id`, wrap(async (req, res) => {
    const Resource = R();
    const { count: _c, ...params } = single(req);
    const c = ctx(req);
    const id = String(req.params.id);
    const patched = await new Resource(id, params as never).patch(normalisePatch(req.body) as never, c);
    // A PATCH that changed nothing still answers with the resource, as one that did.
    send(res, 200, patched ?? (await new Resource(id, params as never).read({ ...c, ifMatch: undefined })));
  }));
  r.delete(`${path}/:id`, wrap(async (req, res) => {
    const Resource = R();
    await new Resource(String(req.params.id)).dispose(ctx(req));
    res.status(204).end();
  }));
}

export function scimRoutes(deps: ScimDeps): Router {
  declareScim();
  const r = Router();
  // Before the body is read: a caller without a token learns nothing, not even that its JSON is bad.
  r.use((req, res, next) => {
    verifyScimBearer(deps.db, req.headers.authorization).then((token) => {
      if (token) return next();
      res.setHeader("www-authenticate", 'Bearer realm="scim"');
      sendScimError(res, 401, null, "missing or wrong SCIM bearer token");
    }, next);
  });
  r.use(express.json({ type: ["application/scim+json", "application/json"], limit: "1mb" }));

  r.get("/ServiceProviderConfig", wrap(async (_req, res) => sendBody(res, 200, await new SCIMMY.Resources.ServiceProviderConfig().read())));
  r.get("/ResourceTypes", wrap(async (_req, res) => sendBody(res, 200, await new SCIMMY.Resources.ResourceType().read())));
  r.get("/ResourceTypes/:id", wrap(async (req, res) => sendBody(res, 200, await new SCIMMY.Resources.ResourceType(String(req.params.id)).read())));
  r.get("/Schemas", wrap(async (_req, res) => sendBody(res, 200, await new SCIMMY.Resources.Schema().read())));
  r.get("/Schemas/:id", wrap(async (req, res) => sendBody(res, 200, await new SCIMMY.Resources.Schema(String(req.params.id)).read())));
  resourceRoutes(r, "/Users", () => SCIMMY.Resources.User, deps);
  resourceRoutes(r, "/Groups", () => SCIMMY.Resources.Group, deps);

  r.all(["/Me", "/Bulk", "/.search"], (req, _res, next) => next(scimError(501, null, `${req.path} is not implemented`)));
  const known = ["/ServiceProviderConfig", "/ResourceTypes", "/ResourceTypes/:id", "/Schemas", "/Schemas/:id", "/Users", "/Users/:id", "/Groups", "/Groups/:id", "/Users/.search", "/Groups/.search"];
  r.all(known, (req, _res, next) => next(scimError(405, null, `${req.method} is not allowed on ${req.path}`)));
  r.use((req, _res, next) => next(scimError(404, null, `no SCIM endpoint ${req.method} ${req.path}`)));
  r.use(scimErrorHandler);
  return r;
}
