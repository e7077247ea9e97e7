// schemathesis (PyPI, in .venv) against both OpenAPI documents of a real platform: every operation
// is sent what its document says is valid (accepted: 2xx, or a 404 for an id that is not there) and
// what it says is not (refused with a 4xx), undeclared methods (405 with Allow), and every answer is
// checked against the document: status, content type, body. Any failure fails the test, with
// schemathesis's report in the message; the report's summary is printed either way.
import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, describe, it } from "node:test";
import { startPlatform, type Platform } from "../helpers/platform.ts";
import { clientFixtures, clientRun } from "../helpers/schemathesis-client.ts";
import { CHECKS, SCHEMATHESIS_BIN, runSchemathesis, type SchemathesisRun } from "../helpers/schemathesis.ts";
import { adminFixtures, adminRun } from "../helpers/schemathesis-admin.ts";

/** Bounds measured on 2 cores: about a minute or two per document (docs/client-api.md). */
const BOUNDS = { maxExamples: 20, workers: 1 };

/** The lines of the report that say what ran: its warnings, the phases, operations, cases and the verdict. */
const summary = (output: string) => {
  const at = output.lastIndexOf("=== WARNINGS");
  return output.slice((at >= 0 ? at : output.lastIndexOf("SUMMARY")) - 40);
};

async function check(name: string, run: Omit<SchemathesisRun, "maxExamples" | "workers">): Promise<void> {
  const r = await runSchemathesis({ ...run, ...BOUNDS });
  console.log(`schemathesis, ${name}: ${SCHEMATHESIS_BIN} run ${run.schemaUrl} (checks ${CHECKS.join(", ")}; ${r.seconds.toFixed(0)} s)\n${r.config}\n${summary(r.output)}`);
  assert.equal(r.code, 0, `schemathesis found failures in the ${name}:\n${r.output.slice(-60_000)}`);
  assert.match(r.output, /No issues found|passed/, "schemathesis ran its cases");
}

describe("schemathesis against the gateway's OpenAPI documents", () => {
  let p: Platform;

  before(async () => {
    assert.ok(fs.existsSync(SCHEMATHESIS_BIN), `${SCHEMATHESIS_BIN}: run bash scripts/python-tools.sh install`);
    p = await startPlatform();
  });
  after(async () => {
    await p?.stop();
  });

  let comfyModel = "";
  it("the client API (/v1/openapi.json) is what its document says", async () => {
    const f = await clientFixtures(p);
    comfyModel = f.pictures;
    await check("client API", clientRun(p, f));
  });

  // After the client API's run: the admin run changes models, keys and limits as it goes.
  it("the admin API (/api/v1/openapi.json) is what its document says", async () => {
    await check("admin API", adminRun(p, await adminFixtures(p, comfyModel)));
  });
});
