// The client API's OpenAPI document against the routes the Express app really mounts, and the
// Swagger UI the gateway serves itself. Runs the app in this process: no engine is involved.
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { after, before, describe, it } from "node:test";
import { clientApi } from "../../gateway/client-api/app.ts";
import type { ClientApiDeps } from "../../gateway/client-api/context.ts";
import { HOT_PATH_ROUTES } from "../../gateway/client-api/hot-path.ts";
import { mountedRoutes, openApiPath } from "../../gateway/http/openapi-build.ts";
import { NOT_DESCRIBED, clientOpenApi } from "../../gateway/client-api/openapi.ts";
import { swaggerUiDir } from "../../gateway/client-api/swagger-ui.ts";

type Doc = { openapi: string; paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { $ref?: string } }> } }>>; components: { schemas: Record<string, unknown> } };

/** Every route is mounted at construction; none of these deps is used until a request arrives. */
const app = () => clientApi({ bodyLimitBytes: 1024 * 1024, jobs: {} } as unknown as ClientApiDeps);

describe("the client API's OpenAPI document", () => {
  const doc = clientOpenApi() as Doc;

  it("describes exactly the routes the gateway serves (walked from app.router, and the hot path's)", () => {
    const mounted = new Set([
      ...mountedRoutes(app())
        .filter((r) => !NOT_DESCRIBED.some((p) => r.path === p || r.path.startsWith(`${p}/`)))
        .map((r) => `${r.method.toUpperCase()} ${openApiPath(r.path)}`),
      ...HOT_PATH_ROUTES.map((p) => `POST ${p}`),
    ]);
    const described = new Set(Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`)));
    assert.ok(mounted.size >= 20, `the walk found the routes: ${[...mounted].join(", ")}`);
    assert.deepEqual([...mounted].filter((r) => !described.has(r)), [], "mounted but not described");
    assert.deepEqual([...described].filter((r) => !mounted.has(r)), [], "described but not mounted");
  });

  it("is OpenAPI 3.1 whose request bodies refer to schemas it holds", () => {
    assert.equal(doc.openapi, "3.1.0");
    const chat = doc.paths["/v1/chat/completions"]!.post!.requestBody!.content["application/json"]!.schema.$ref;
    assert.equal(chat, "#/components/schemas/ChatCompletionRequest");
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [m, op] of Object.entries(ops)) {
        for (const c of Object.values(op.requestBody?.content ?? {})) {
          const ref = c.schema.$ref;
          if (ref) assert.ok(doc.components.schemas[ref.split("/").pop()!], `${m} ${p}: ${ref} is in components`);
        }
      }
    }
    // The JSON Schema comes from the zod validator itself: its limits are there.
    const chatSchema = doc.components.schemas.ChatCompletionRequest as { required: string[]; properties: { messages: { minItems: number; items: { properties: { role: { enum: string[] } } } } } };
    assert.deepEqual(chatSchema.required.sort(), ["messages", "model"]);
    assert.equal(chatSchema.properties.messages.minItems, 1);
    assert.ok(chatSchema.properties.messages.items.properties.role.enum.includes("tool"));
  });
});

describe("the gateway serves its document and Swagger UI", () => {
  let server: Server;
  let base: string;

  before(async () => {
    assert.ok(swaggerUiDir(), "swagger-ui-dist is installed");
    server = app().listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it("GET /v1/openapi.json needs no key; the rest of /v1 still does", async () => {
    const r = await fetch(`${base}/v1/openapi.json`);
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), clientOpenApi());
    assert.equal((await fetch(`${base}/v1/models`)).status, 401);
  });

  it("an undeclared method on a documented path is a 405 with Allow, in the route's own error shape", async () => {
    const patch = await fetch(`${base}/v1/models`, { method: "PATCH" });
    assert.equal(patch.status, 405, "before the key is asked for");
    assert.equal(patch.headers.get("allow"), "GET, HEAD");
    assert.deepEqual(((await patch.json()) as { error: { type: string; code: string } }).error.code, "method_not_allowed");
    const put = await fetch(`${base}/v1/messages`, { method: "PUT", headers: { "content-type": "application/json" }, body: "{}" });
    assert.equal(put.status, 405);
    assert.equal(put.headers.get("allow"), "POST");
    assert.equal(((await put.json()) as { type: string }).type, "error", "Anthropic's shape on /v1/messages");
    const files = await fetch(`${base}/v1/files/file-1`, { method: "PATCH" });
    assert.equal(files.headers.get("allow"), "GET, HEAD, DELETE");
    const options = await fetch(`${base}/v1/chat/completions`, { method: "OPTIONS" });
    assert.equal(options.status, 204);
    assert.equal(options.headers.get("allow"), "POST");
  });

  it("answers JSON, never Express's HTML, for a path no route serves, /health's other methods included", async () => {
    for (const [method, path] of [["GET", "/nope"], ["GET", "/ready"], ["DELETE", "/health"], ["POST", "/v1/nope"]] as const) {
      const r = await fetch(`${base}${path}`, { method });
      assert.match(r.headers.get("content-type") ?? "", /^application\/json/, `${method} ${path}`);
      assert.ok(((await r.json()) as { error: unknown }).error, `${method} ${path}`);
    }
  });

  it("GET /docs/api is Swagger UI over /v1/openapi.json with its assets from this gateway", async () => {
    const redirect = await fetch(`${base}/docs/api`, { redirect: "manual" });
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.get("location"), "/docs/api/");
    const page = await fetch(`${base}/docs/api/`);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.doesNotMatch(html, /https?:\/\//, "no CDN: every asset is relative");
    for (const src of [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)) {
      const asset = await fetch(`${base}/docs/api/${src}`);
      assert.equal(asset.status, 200, src);
      assert.ok((await asset.arrayBuffer()).byteLength > 0, src);
    }
    const init = await (await fetch(`${base}/docs/api/init.js`)).text();
    assert.match(init, /"\/v1\/openapi\.json"/);
    const bundle = await fetch(`${base}/docs/api/swagger-ui-bundle.js`);
    assert.match(bundle.headers.get("content-type") ?? "", /javascript/);
    assert.match((await bundle.text()).slice(0, 100_000), /SwaggerUIBundle|swagger/i);
    assert.equal((await fetch(`${base}/docs/api/package.json`)).status, 404, "only the page's assets are served");
  });
});
