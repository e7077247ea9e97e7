// The production Temporal of a single-machine install (scripts/temporal-server.sh, started through
// services.sh's LLMGW_TEMPORAL_MODE=server): the real server on PostgreSQL databases of the test's
// own, on ports of its own, with its Web UI. The platform serves a model on it, the workflows'
// state is found in those databases, the UI lists them, and stop leaves nothing listening.
// The binaries are built from Go modules (bash scripts/temporal-server.sh install, minutes): where
// they are not cached, the test is skipped, saying so.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { Connection } from "@temporalio/client";
import OpenAI from "openai";
import pg from "pg";
import { modelWorkflowId } from "../../workflows/model-types.ts";
import { freePort, startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

const SCRIPTS = fileURLToPath(new URL("../../scripts/", import.meta.url));
const installed = spawnSync("bash", [path.join(SCRIPTS, "temporal-server.sh"), "installed"]).status === 0;
const skip = installed ? false : "the Temporal server binaries are not built (bash scripts/temporal-server.sh install builds them from Go modules: 36 minutes with cold caches on 2 shared cores)";

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    s.once("connect", () => (s.destroy(), resolve(true)));
    s.once("error", () => resolve(false));
  });

/**
 * A base port with it and the nine after it free: the server's frontend, history, matching, worker,
 * HTTP, membership and metrics ports. Below 18000: the server keeps membership ports in a SMALLINT
 * (at most 32767), and the kernel's ephemeral ports and the test platforms' engines lie above.
 */
async function freeBlock(): Promise<number> {
  for (;;) {
    const base = 11000 + Math.floor(Math.random() * 700) * 10;
    const taken = await Promise.all(Array.from({ length: 10 }, (_, i) => listening(base + i)));
    if (!taken.some(Boolean)) return base;
  }
}

describe("the real Temporal server on PostgreSQL", { skip }, () => {
  const id = randomBytes(3).toString("hex");
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-temporal-server-"));
  const dbs = { temporal: `temporal_t_${id}`, visibility: `temporal_vis_t_${id}` };
  const dbUrl = (name: string) => {
    const u = new URL(process.env.DATABASE_URL ?? "postgresql://llmgw@127.0.0.1:5433/llmgw_test");
    u.pathname = `/${name}`;
    return u.toString();
  };
  let port = 0;
  let uiPort = 0;
  let env: NodeJS.ProcessEnv = {};
  let p: Platform | undefined;
  const services = (...args: string[]) =>
    execFileSync("bash", [path.join(SCRIPTS, "services.sh"), ...args], { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 400_000 });
  /** services.sh status's Temporal line (it exits 3 when something is stopped). */
  const temporalStatus = () => spawnSync("bash", [path.join(SCRIPTS, "services.sh"), "status"], { env, encoding: "utf8" }).stdout.split("\n").find((l) => l.startsWith("temporal")) ?? "";

  before(async () => {
    [port, uiPort] = [await freeBlock(), await freePort()];
    env = {
      ...process.env,
      LLMGW_DATA_DIR: dataDir,
      LLMGW_TEMPORAL_MODE: "server",
      LLMGW_TEMPORAL_PORT: String(port),
      LLMGW_TEMPORAL_UI_PORT: String(uiPort),
      LLMGW_TEMPORAL_DB: dbs.temporal,
      LLMGW_TEMPORAL_VISIBILITY_DB: dbs.visibility,
      LLMGW_TEMPORAL_NAMESPACES: "llmgw-test",
    };
    delete env.TEMPORAL_ADDRESS; // set: services.sh would take Temporal for somebody else's
  });
  after(async () => {
    await p?.stop();
    try {
      services("stop", "temporal");
    } finally {
      const admin = new pg.Client({ connectionString: dbUrl("postgres") });
      await admin.connect();
      for (const db of Object.values(dbs)) await admin.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
      await admin.end();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("starts through services.sh: schema set up in databases of its own, the namespace registered", async () => {
    services("start", "temporal");
    assert.match(temporalStatus(), new RegExp(`running +127\\.0\\.0\\.1:${port} \\(server v1\\.32\\.0`));
    const conn = await Connection.connect({ address: `127.0.0.1:${port}` });
    try {
      assert.equal((await conn.workflowService.getSystemInfo({})).serverVersion, "1.32.0");
      const ns = await conn.workflowService.describeNamespace({ namespace: "llmgw-test" });
      assert.equal(ns.namespaceInfo?.name, "llmgw-test");
    } finally {
      await conn.close();
    }
    const c = new pg.Client({ connectionString: dbUrl(dbs.temporal) });
    await c.connect();
    try {
      const v = await c.query<{ curr_version: string }>("SELECT curr_version FROM schema_version");
      assert.match(v.rows[0]!.curr_version, /^1\.\d+$/, "temporal-sql-tool brought the schema to a release's version");
    } finally {
      await c.end();
    }
    // Starting again finds it running, touches nothing.
    services("start", "temporal");
  });

  it("runs the platform: a model served by workflows kept in PostgreSQL, a request answered, the UI listing them", async () => {
    p = await startPlatform({ env: { TEMPORAL_ADDRESS: `127.0.0.1:${port}`, LLMGW_TEMPORAL_NAMESPACE: "llmgw-test" } });
    const model = uniqueModel("tserver");
    const served = await p.ctl(["model", "serve", model, "--engine", "sim", "--replicas", "1", "--wait"]);
    assert.equal(served.code, 0, `${served.stderr}\n${p.logTails()}`);
    await p.ctl(["projects", "create", "ts"]);
    const key = (JSON.parse((await p.ctl(["keys", "create", "--project", "ts", "--json"])).stdout) as { key: string }).key;
    const client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, maxRetries: 0 });
    const answer = await client.chat.completions.create({ model, messages: [{ role: "user", content: "hello" }], max_tokens: 4 });
    assert.ok(answer.choices[0]?.message.content, "the model answered");

    const c = new pg.Client({ connectionString: dbUrl(dbs.temporal) });
    await c.connect();
    try {
      const rows = await c.query<{ n: string }>("SELECT count(*) AS n FROM current_executions WHERE workflow_id = $1", [modelWorkflowId(model)]);
      assert.equal(Number(rows.rows[0]!.n), 1, "the model's workflow is a row in the server's own database");
    } finally {
      await c.end();
    }
    const page = await fetch(`http://127.0.0.1:${uiPort}/`);
    assert.equal(page.status, 200);
    const listed = await fetch(`http://127.0.0.1:${uiPort}/api/v1/namespaces/llmgw-test/workflows?query=${encodeURIComponent(`WorkflowId="${modelWorkflowId(model)}"`)}`);
    assert.equal(listed.status, 200, await listed.clone().text());
    const body = (await listed.json()) as { executions?: { execution?: { workflowId?: string } }[] };
    assert.ok(body.executions?.some((e) => e.execution?.workflowId === modelWorkflowId(model)), `the UI lists ${modelWorkflowId(model)}: ${JSON.stringify(body).slice(0, 400)}`);
    await p.stop();
    p = undefined;
  });

  it("stops: nothing left on its ports", async () => {
    services("stop", "temporal");
    assert.equal(await listening(port), false);
    assert.equal(await listening(uiPort), false);
    assert.match(temporalStatus(), /stopped/);
  });
});
