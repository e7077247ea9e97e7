// The admin API's Express app with nothing behind it: every route is mounted at construction and
// none of these deps is used until a handler reaches the store or Temporal, so tests can walk its
// routes, read its OpenAPI document and try what is checked before either.
import type express from "express";
import { adminApi } from "../../gateway/admin-api/app.ts";
import { openApiPath } from "../../gateway/http/openapi-build.ts";
import type { EndpointRegistry } from "../../gateway/router/registry.ts";

export const BARE_ADMIN_TOKEN = "admin-openapi-test-token";

/** The explain route is mounted only with a registry, which the gateway always has. */
export const bareAdminApi = (): express.Express =>
  adminApi({ db: {}, redis: {}, temporal: {}, taskQueue: "unused", adminToken: BARE_ADMIN_TOKEN, registry: {} as EndpointRegistry, notifier: {} } as unknown as Parameters<typeof adminApi>[0]);

/** Express's mounted paths as the admin docs write them: without /api/v1, {param} for :param and *param. */
export const docPath = (p: string): string => openApiPath(p).replace(/^\/api\/v1(?=\/)/, "");
