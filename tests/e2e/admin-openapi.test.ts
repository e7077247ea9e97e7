// The admin API's OpenAPI document against the routes the Express app really mounts, its shape as
// OpenAPI 3.1, and GET /api/v1/openapi.json behind the admin token. Runs the app in this process:
// no store, Temporal or engine is involved.
import assert from "node:assert/strict";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { adminOpenApi } from "../../gateway/admin-api/openapi.ts";
import { LIMIT_SCOPES } from "../../gateway/auth/limit-book.ts";
import { describedRoutes, routeDrift } from "../../gateway/http/openapi-build.ts";
import { BARE_ADMIN_TOKEN, bareAdminApi } from "../helpers/admin-app.ts";

type Schema = { $ref?: string; type?: string; enum?: string[]; required?: string[]; additionalProperties?: unknown; properties?: Record<string, Schema> };
type Op = {
  operationId: string;
  responses: Record<string, { description?: string; content?: Record<string, { schema: Schema }> }>;
  requestBody?: { required: boolean; content: Record<string, { schema: Schema }> };
  parameters?: { name: string; in: string; required: boolean; schema: Schema }[];
  security?: unknown[];
};
type Doc = { openapi: string; info: { title: string; version: string }; security: Record<string, string[]>[]; paths: Record<string, Record<string, Op>>; components: { schemas: Record<string, Schema>; securitySchemes: Record<string, unknown> } };

const doc = adminOpenApi() as Doc;
const op = (path: string, method: string): Op => {
  const o = doc.paths[path]?.[method];
  assert.ok(o, `${method.toUpperCase()} ${path} is described`);
  return o;
};

describe("the admin API's OpenAPI document", () => {
  it("describes exactly the routes the app mounts (walked from app.router)", () => {
    const drift = routeDrift(bareAdminApi(), doc);
    assert.ok(drift.mounted.length >= 40, `the walk found the routes: ${drift.mounted.join(", ")}`);
    assert.ok(drift.mounted.includes("POST /api/v1/explain") && drift.mounted.includes("GET /health"), "explain and /health are walked");
    assert.deepEqual(drift.undescribed, [], "mounted but not described");
    assert.deepEqual(drift.unmounted, [], "described but not mounted");
  });

  it("the comparison fails on a route mounted but not described, and on one described but not mounted", () => {
    const app = bareAdminApi();
    const baseline = routeDrift(app, doc);
    app.post("/api/v1/not-described/:id", (_req, res) => void res.end());
    const { ["/api/v1/usage"]: _usage, ...paths } = doc.paths;
    const drift = routeDrift(app, { ...doc, paths: { ...paths, "/api/v1/not-mounted": { get: op("/api/v1/nodes", "get") } } });
    // Against the baseline, so that this test says only what the check adds.
    assert.deepEqual(drift.undescribed.filter((r) => !baseline.undescribed.includes(r)).sort(), ["GET /api/v1/usage", "POST /api/v1/not-described/{id}"]);
    assert.deepEqual(drift.unmounted.filter((r) => !baseline.unmounted.includes(r)), ["GET /api/v1/not-mounted"]);
  });

  it("is OpenAPI 3.1: every operation answers something, every $ref resolves, every path parameter is declared", () => {
    assert.match(doc.openapi, /^3\.1\.\d+$/);
    assert.ok(doc.info.title && doc.info.version);
    assert.deepEqual(doc.security, [{ adminToken: [] }, { session: [] }, { sessionCookie: [] }], "the admin token or a person's session");
    assert.deepEqual(Object.keys(doc.components.securitySchemes), ["adminToken", "session", "sessionCookie"]);
    assert.deepEqual(doc.components.securitySchemes.sessionCookie, { type: "apiKey", in: "cookie", name: "llmgw_session", description: "the console's session cookie; POST, PUT, PATCH and DELETE also need x-csrf-token" });
    const ids = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      assert.match(path, /^\/[A-Za-z0-9_./{}-]*$/, `${path}: no Express syntax left`);
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!).sort();
      for (const [method, o] of Object.entries(ops)) {
        const at = `${method.toUpperCase()} ${path}`;
        assert.ok(["get", "post", "put", "patch", "delete"].includes(method), at);
        assert.ok(!ids.has(o.operationId), `${at}: operationId ${o.operationId} is unique`);
        ids.add(o.operationId);
        assert.ok(Object.keys(o.responses).some((s) => /^[2]\d\d$/.test(s)), `${at} has a success response`);
        for (const [status, r] of Object.entries(o.responses)) assert.ok(r.description, `${at} ${status} has a description`);
        const declared = (o.parameters ?? []).filter((p) => p.in === "path");
        assert.deepEqual(declared.map((p) => p.name).sort(), templated, `${at}: path parameters`);
        assert.ok(declared.every((p) => p.required), `${at}: path parameters are required`);
        if (o.requestBody) {
          const json = o.requestBody.content["application/json"];
          assert.ok(json, `${at}: a JSON body`);
          assert.match(json.schema.$ref ?? "", /^#\/components\/schemas\//, `${at}: the body refers to a named schema`);
        }
      }
    }
    // Every $ref anywhere in the document names a schema it holds.
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);
    assert.ok(refs.length >= 20);
    for (const r of refs) assert.ok(doc.components.schemas[r], `${r} is in components`);
    // Only the liveness route goes without the token.
    const open = describedRoutes(doc).filter((r) => {
      const [m, p] = r.split(" ");
      return doc.paths[p!]![m!.toLowerCase()]!.security?.length === 0;
    });
    assert.deepEqual(open, ["GET /health"]);
  });

  it("holds the routes' own validators: their limits, enums and strictness are in it", () => {
    assert.equal(op("/api/v1/models/{name}/serve", "post").requestBody!.content["application/json"]!.schema.$ref, "#/components/schemas/ServeRequest");
    assert.deepEqual(doc.components.schemas.ServeRequest!.required, ["replicas"]);
    assert.deepEqual(doc.components.schemas.ExplainRequest!.required, ["model"]);
    assert.equal(op("/api/v1/explain", "post").requestBody!.required, true, "explain needs a body: its model is required");
    assert.equal(op("/api/v1/training", "post").requestBody!.required, true);
    assert.equal(doc.components.schemas.LimitsRequest!.additionalProperties, false, "limit bodies are strict");
    assert.deepEqual(doc.components.schemas.ModelEntry!.required?.includes("name"), true);
    const scope = op("/api/v1/limits/{scope}/{name}", "put").parameters!.find((p) => p.name === "scope")!;
    assert.deepEqual(scope.schema.enum, [...LIMIT_SCOPES]);
    const action = op("/api/v1/operations/{id}/{action}", "post").parameters!.find((p) => p.name === "action")!;
    assert.deepEqual(action.schema.enum, ["pause", "resume", "abort", "promote"]);
    const usage = op("/api/v1/usage", "get").parameters!.filter((p) => p.in === "query");
    assert.deepEqual(usage.map((p) => p.name).sort(), ["by", "format", "from", "to"]);
    assert.deepEqual(usage.find((p) => p.name === "format")!.schema.enum, ["json", "csv"]);
    assert.ok(usage.every((p) => !p.required), "every usage filter has a default");
    const placement = op("/api/v1/models/{name}/placement", "get").parameters!;
    assert.deepEqual(placement.map((p) => `${p.in} ${p.name} ${p.required}`), ["path name true", "query replicas false", "query version false"]);
    assert.match(JSON.stringify(placement[0]!.schema), /"pattern"/, "the model name's pattern comes from its validator");
    const artifact = op("/api/v1/training/{id}/artifact", "get").parameters!.filter((p) => p.in === "query");
    assert.ok(artifact.every((p) => !p.required), "without offset the artifact comes as bytes");
  });
});

describe("the admin API serves its document behind the admin token", () => {
  let server: Server;
  let base: string;
  const auth = { authorization: `Bearer ${BARE_ADMIN_TOKEN}` };

  before(async () => {
    server = bareAdminApi().listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it("GET /api/v1/openapi.json needs the token, like the rest of /api/v1", async () => {
    const refused = await fetch(`${base}/api/v1/openapi.json`);
    assert.equal(refused.status, 401);
    assert.deepEqual(await refused.json(), { error: { message: "missing or wrong admin token", field: null } });
    assert.equal((await fetch(`${base}/api/v1/openapi.json`, { headers: { authorization: "Bearer wrong" } })).status, 401);
    const r = await fetch(`${base}/api/v1/openapi.json`, { headers: auth });
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), JSON.parse(JSON.stringify(adminOpenApi())));
    assert.equal((await fetch(`${base}/health`)).status, 200, "liveness needs no token");
  });

  it("an undeclared method is a 405 with Allow in the admin API's shape (after the token); no path answers HTML", async () => {
    assert.equal((await fetch(`${base}/api/v1/nodes`, { method: "PUT" })).status, 401, "the token first");
    const r = await fetch(`${base}/api/v1/nodes`, { method: "PUT", headers: auth });
    assert.equal(r.status, 405);
    assert.equal(r.headers.get("allow"), "GET, HEAD");
    assert.deepEqual(await r.json(), { error: { message: "PUT is not allowed on /api/v1/nodes; allowed: GET, HEAD", field: null } });
    const op = await fetch(`${base}/api/v1/operations/model/m/serve/3`, { method: "PUT", headers: auth });
    assert.equal(op.headers.get("allow"), "GET, HEAD, POST", "a wildcard path and a longer one: the methods of both");
    const health = await fetch(`${base}/health`, { method: "DELETE" });
    assert.equal(health.status, 405);
    for (const path of ["/nope", "/api/v1/nope"]) {
      const nf = await fetch(`${base}${path}`, { headers: auth });
      assert.equal(nf.status, 404);
      assert.match(nf.headers.get("content-type") ?? "", /^application\/json/);
    }
  });

  it("refuses what the described validators refuse, before reaching the store or Temporal", async () => {
    const post = (path: string, body: unknown) => fetch(`${base}/api/v1${path}`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify(body) });
    const bogus = await post("/operations/model/m/serve/3/bogus", {});
    assert.equal(bogus.status, 404);
    assert.deepEqual(await bogus.json(), { error: { message: "no action 'bogus': pause, resume, abort or promote", field: "action" } });
    const placement = await fetch(`${base}/api/v1/models/m/placement?replicas=0`, { headers: auth });
    assert.equal(placement.status, 400);
    assert.deepEqual(await placement.json(), { error: { message: "replicas: a whole number from 1 to 1000", field: "replicas" } });
    const name = await fetch(`${base}/api/v1/models/${encodeURIComponent("bad name!")}/placement`, { headers: auth });
    assert.equal(name.status, 400);
    assert.equal(((await name.json()) as { error: { field: string } }).error.field, "name");
    const limit = await fetch(`${base}/api/v1/limits/galaxy/x`, { method: "PUT", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ rpm: 1 }) });
    assert.equal(limit.status, 400);
    assert.equal(((await limit.json()) as { error: { field: string } }).error.field, "scope");
  });
});
