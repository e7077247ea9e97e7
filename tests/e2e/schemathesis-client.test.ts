// schemathesis (PyPI, in .venv) against the client API's OpenAPI document of a real platform: every
// operation is sent what its document says is valid (accepted: 2xx, or a 404 for an id that is not
// there) and what it says is not (refused with a 4xx), undeclared methods (405 with Allow), and every
// answer is checked against the document: status, content type, body. Any failure fails the test,
// with schemathesis's report in the message; the report's summary is printed either way. The admin
// API's document has a file of its own (schemathesis-admin.test.ts), so the two go to different lanes.
import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, describe, it } from "node:test";
import { startPlatform, type Platform } from "../helpers/platform.ts";
import { clientFixtures, clientRun } from "../helpers/schemathesis-client.ts";
import { SCHEMATHESIS_BIN, checkDocument } from "../helpers/schemathesis.ts";

describe("schemathesis against the client API's OpenAPI document", () => {
  let p: Platform;

  before(async () => {
    assert.ok(fs.existsSync(SCHEMATHESIS_BIN), `${SCHEMATHESIS_BIN}: run bash scripts/python-tools.sh install`);
    p = await startPlatform();
  });
  after(async () => {
    await p?.stop();
  });

  it("the client API (/v1/openapi.json) is what its document says", async () => {
    await checkDocument("client API", clientRun(p, await clientFixtures(p)));
  });
});
