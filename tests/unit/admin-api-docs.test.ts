// docs/admin-api.md against the admin app: every route it mounts is in the reference, written out
// in full (`POST /nodes/{id}/uncordon`, not `/uncordon`), and every route the reference names is
// mounted. The routes are walked from the app itself, so a new one is seen the moment it is mounted.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { mountedRoutes } from "../../gateway/http/openapi-build.ts";
import { bareAdminApi, docPath } from "../helpers/admin-app.ts";
import { REPO } from "../helpers/settings.ts";

const text = fs.readFileSync(path.join(REPO, "docs/admin-api.md"), "utf8");

/** Routes the reference names in backticks, as "GET /models/{name}" (a query left off). */
const documented = new Set([...text.matchAll(/`(GET|POST|PUT|PATCH|DELETE) (\/[^`?\s]*)/g)].map((m) => `${m[1]} ${docPath(m[2]!)}`));
const mounted = new Set(mountedRoutes(bareAdminApi()).map((r) => `${r.method.toUpperCase()} ${docPath(r.path)}`));

describe("the admin API reference (docs/admin-api.md)", () => {
  it("names every route the admin app mounts", () => {
    assert.ok(mounted.size >= 40 && mounted.has("POST /explain") && mounted.has("GET /health"), `the walk found the routes: ${[...mounted].join(", ")}`);
    assert.deepEqual([...mounted].filter((r) => !documented.has(r)), [], "mounted but missing from docs/admin-api.md");
  });

  it("names only routes the admin app mounts", () => {
    assert.ok(documented.size >= 40, `${documented.size} routes read from the reference`);
    assert.deepEqual([...documented].filter((r) => !mounted.has(r)), [], "in docs/admin-api.md but not mounted");
  });
});
