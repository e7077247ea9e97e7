// OpenAPI 3.1 documents built from the zod schemas that validate the requests, so the document
// cannot describe a body the API would refuse; and the list of routes an Express app mounts, so a
// test can hold the two together.
import type express from "express";
import { z } from "zod";

export type Method = "get" | "post" | "put" | "patch" | "delete";

export interface Operation {
  method: Method;
  /** Express style: /v1/files/:id, or /ops/*id for a parameter that may hold slashes. */
  path: string;
  summary: string;
  tag: string;
  /** The body's schema: JSON unless requestContentType says otherwise (a multipart form's fields). */
  request?: z.ZodType;
  requestContentType?: string;
  /** The handler takes a missing body as {}. */
  bodyOptional?: boolean;
  /**
   * Status → what comes back; a schema without a name is inlined. contentTypes: the media types it
   * may come as (default JSON); the schema describes the JSON ones.
   */
  responses: Record<string, { description: string; schema?: z.ZodType; contentTypes?: string[] }>;
  query?: z.ZodObject;
  /** The schemas of path parameters the handler checks; any other is a plain string. */
  params?: z.ZodObject;
  /** false for the few routes that need no credential. */
  auth?: boolean;
}

export interface DocumentSpec {
  title: string;
  version: string;
  description: string;
  security: Record<string, unknown>;
  /** Named schemas: put in components.schemas and referred to by $ref wherever used. */
  named: Record<string, z.ZodType>;
  /** The error answer every authenticated operation may give (4xx/5xx). */
  error: z.ZodType;
  operations: Operation[];
}

const PARAM = /[:*]([A-Za-z0-9_]+)/g;

/** Express's /v1/files/:id (or a wildcard, *id) as OpenAPI's /v1/files/{id}. */
export const openApiPath = (p: string): string => p.replace(PARAM, "{$1}");

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as Record<string, unknown>;
  return rest;
}

export function buildOpenApi(spec: DocumentSpec): Record<string, unknown> {
  const names = new Map<z.ZodType, string>(Object.entries(spec.named).map(([k, v]) => [v, k]));
  const components: Record<string, unknown> = {};
  const ref = (schema: z.ZodType, io: "input" | "output") => {
    const name = names.get(schema);
    if (!name) return jsonSchema(schema, io);
    components[name] ??= jsonSchema(schema, io);
    return { $ref: `#/components/schemas/${name}` };
  };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of spec.operations) {
    const params = [...op.path.matchAll(PARAM)].map((m) => {
      const s = op.params?.shape[m[1]!] as z.ZodType | undefined;
      const wild = m[0].startsWith("*") ? { description: "may hold slashes: send them as they are, or as %2F" } : {};
      return { name: m[1], in: "path", required: true, ...wild, schema: s ? jsonSchema(s, "input") : { type: "string" } };
    });
    if (op.query) {
      for (const [name, s] of Object.entries(op.query.shape)) params.push({ name, in: "query", required: !(s as z.ZodType).safeParse(undefined).success, schema: jsonSchema(s as z.ZodType, "input") as never });
    }
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(op.responses)) {
      const types = r.contentTypes ?? (r.schema ? ["application/json"] : []);
      const content = Object.fromEntries(types.map((t) => [t, { schema: r.schema && /json/.test(t) ? ref(r.schema, "output") : {} }]));
      responses[status] = { description: r.description, ...(types.length ? { content } : {}) };
    }
    responses.default ??= { description: "An error, in this API's shape", content: { "application/json": { schema: ref(spec.error, "output") } } };
    const body = op.request ? { required: !op.bodyOptional, content: { [op.requestContentType ?? "application/json"]: { schema: ref(op.request, "input") } } } : undefined;
    (paths[openApiPath(op.path)] ??= {})[op.method] = {
      summary: op.summary,
      tags: [op.tag],
      operationId: `${op.method}${op.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ?? "").toUpperCase())}`,
      ...(params.length ? { parameters: params } : {}),
      ...(body ? { requestBody: body } : {}),
      responses,
      ...(op.auth === false ? { security: [] } : {}),
    };
  }
  return {
    openapi: "3.1.0",
    info: { title: spec.title, version: spec.version, description: spec.description },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    security: Object.keys(spec.security).map((k) => ({ [k]: [] })),
    paths,
    components: { schemas: components, securitySchemes: spec.security },
  };
}

export interface MountedRoute {
  method: string;
  path: string;
}

interface LayerLike {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  rawPath?: unknown;
  handle?: { stack?: LayerLike[] };
}

/** Every route an Express 5 app answers, walked from app.router's stack through mounted routers. */
export function mountedRoutes(app: express.Express): MountedRoute[] {
  const out: MountedRoute[] = [];
  const walk = (stack: LayerLike[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const p of ([] as string[]).concat(layer.route.path)) {
          for (const [m, on] of Object.entries(layer.route.methods)) if (on && m !== "_all") out.push({ method: m, path: join(prefix, p) });
        }
      } else if (layer.handle?.stack) {
        const at = typeof layer.rawPath === "string" ? layer.rawPath : "";
        walk(layer.handle.stack, join(prefix, at));
      }
    }
  };
  walk((app as unknown as { router: { stack: LayerLike[] } }).router.stack, "");
  return out;
}

/** "GET /v1/files/{id}" for each operation a built document holds. */
export function describedRoutes(doc: Record<string, unknown>): string[] {
  return Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
}

/**
 * The routes an app mounts that its document does not describe, and the reverse: both empty when
 * they agree. Mounted paths under one of `served` (pages beside the API) are left out.
 */
export function routeDrift(app: express.Express, doc: Record<string, unknown>, served: string[] = []): { mounted: string[]; undescribed: string[]; unmounted: string[] } {
  const mounted = [
    ...new Set(
      mountedRoutes(app)
        .filter((r) => !served.some((p) => r.path === p || r.path.startsWith(`${p}/`)))
        .map((r) => `${r.method.toUpperCase()} ${openApiPath(r.path)}`),
    ),
  ];
  const described = describedRoutes(doc);
  return { mounted, undescribed: mounted.filter((r) => !described.includes(r)), unmounted: described.filter((r) => !mounted.includes(r)) };
}

const join = (a: string, b: string) => (a + (b === "/" ? "" : b)).replace(/\/+/g, "/") || "/";
