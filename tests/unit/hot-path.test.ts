// Which requests the plain-node hot path takes (every POST to an inference route, whatever its query
// string or spelling) and which it leaves to the express app (everything else), over real HTTP.
// The express app is a stand-in here: an answer from it means the hot path let the request by.
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import type { ClientApiDeps } from "../../gateway/client-api/context.ts";
import { HOT_PATH_ROUTES, routePathOf, withHotPath } from "../../gateway/client-api/hot-path.ts";

describe("routePathOf", () => {
  it("drops the query string and one trailing slash, and matches in any case, as express does", () => {
    assert.equal(routePathOf("/v1/chat/completions"), "/v1/chat/completions");
    assert.equal(routePathOf("/v1/chat/completions?x=1&y=2"), "/v1/chat/completions");
    assert.equal(routePathOf("/v1/embeddings/"), "/v1/embeddings");
    assert.equal(routePathOf("/V1/Messages/?beta=true"), "/v1/messages");
    assert.equal(routePathOf("/"), "/");
    assert.equal(routePathOf("/v1/messages/count_tokens"), "/v1/messages/count_tokens");
  });
});

describe("the hot path in front of the express app", () => {
  let server: http.Server;
  let base: string;
  before(async () => {
    // No key is sent, so authentication refuses before the key cache or anything else is used.
    const deps = { bodyLimitBytes: 64 * 1024, keys: {} } as unknown as ClientApiDeps;
    const app: http.RequestListener = (_req, res) => void res.writeHead(299, { "content-type": "text/plain" }).end("express");
    server = http.createServer(withHotPath(deps, app)).listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const post = (path: string) => fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json", "x-request-id": "rid-1" }, body: "{}" });

  it("takes a POST to each inference route, bare, with a query string, a trailing slash or another case", async () => {
    assert.deepEqual([...HOT_PATH_ROUTES].sort(), ["/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/messages", "/v1/rerank", "/v1/responses"]);
    for (const route of HOT_PATH_ROUTES) {
      for (const path of [route, `${route}?x=1`, `${route}/`, `${route.toUpperCase()}?stream=true`]) {
        const r = await post(path);
        const body = (await r.json()) as { type?: string; error: { type: string; code?: string | null } };
        assert.equal(r.status, 401, `${path} is served by the hot path (the key is missing)`);
        assert.equal(r.headers.get("x-request-id"), "rid-1");
        if (route === "/v1/messages") assert.deepEqual([body.type, body.error.type], ["error", "authentication_error"], `${path}: Anthropic's shape`);
        else assert.deepEqual(Object.keys(body.error).sort(), ["code", "message", "param", "type"], `${path}: OpenAI's shape`);
      }
    }
  });

  it("leaves other methods on those routes (their 405) and every other route to express", async () => {
    for (const [method, path] of [["GET", "/v1/chat/completions"], ["PUT", "/v1/messages?x=1"], ["POST", "/v1/models"], ["POST", "/v1/messages/count_tokens"], ["POST", "/v1/chat/completions/extra"], ["GET", "/v1/responses/resp_1"], ["DELETE", "/v1/responses/resp_1"]] as const) {
      const r = await fetch(`${base}${path}`, { method, ...(method === "GET" ? {} : { body: "{}" }) });
      assert.equal(r.status, 299, `${method} ${path} goes to express`);
      assert.equal(await r.text(), "express");
    }
  });
});
