// schemathesis (PyPI, in .venv) against the admin API's OpenAPI document of a real platform, as
// schemathesis-client.test.ts does for the client API: valid data accepted, invalid refused with a
// 4xx, undeclared methods 405, every answer as its document says. The run changes models, keys and
// limits as it goes, on a platform of its own.
import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, describe, it } from "node:test";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";
import { adminFixtures, adminRun } from "../helpers/schemathesis-admin.ts";
import { SCHEMATHESIS_BIN, checkDocument } from "../helpers/schemathesis.ts";

describe("schemathesis against the admin API's OpenAPI document", () => {
  let p: Platform;

  before(async () => {
    assert.ok(fs.existsSync(SCHEMATHESIS_BIN), `${SCHEMATHESIS_BIN}: run bash scripts/python-tools.sh install`);
    p = await startPlatform();
  });
  after(async () => {
    await p?.stop();
  });

  it("the admin API (/api/v1/openapi.json) is what its document says", async () => {
    // A served ComfyUI stand-in, for the catalogued workflow the admin fixtures add.
    const comfy = uniqueModel("st-pictures");
    const served = await p.ctl(["model", "serve", comfy, "--engine", "comfyui", "--replicas", "1", "--arg=--llmgw-standin", "--arg=--step-ms=1", "--wait", "--json"]);
    assert.equal(served.code, 0, served.stderr);
    await checkDocument("admin API", adminRun(p, await adminFixtures(p, comfy)));
  });
});
