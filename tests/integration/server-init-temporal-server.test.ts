// `llmgw server init --temporal server`: a single-machine install on the real Temporal server
// (temporal-server on PostgreSQL, Temporal's own recommendation for production) instead of the CLI's
// dev server. Under a root of its own (--prefix) with a stand-in systemctl that runs the units as
// systemd would: init sets up Temporal's two databases with temporal-sql-tool, writes the server's
// configuration (mode 0600: it holds the database password), starts llmgw-temporal, registers the
// namespace and llmgw's search attributes, starts the Web UI, then the worker and the gateway, and the
// platform answers from what it wrote. The binaries are built from Go modules
// (bash scripts/temporal-server.sh install): where they are not cached this file skips, saying so.
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { LLMGW_BIN } from "../../common/children.ts";
import { defaultServerDir } from "../../launcher/server-init/temporal-server.ts";
import { systemdStandIn, type StandIn } from "../helpers/systemd-standin.ts";

const installed = spawnSync("bash", [path.join(path.dirname(LLMGW_BIN), "../scripts/temporal-server.sh"), "installed"]).status === 0;
const skip = installed ? false : "the Temporal server binaries are not built (bash scripts/temporal-server.sh install builds them from Go modules: 36 minutes with cold caches on 2 shared cores)";

const id = randomBytes(4).toString("hex");
const root = fs.mkdtempSync(path.join(os.tmpdir(), `llmgw-init-ts-${id}-`));
const prefix = path.join(root, "server");
const database = new URL(process.env.DATABASE_URL ?? "postgresql://llmgw@127.0.0.1:5433/llmgw_test");
const dbName = `llmgw_init_ts_${id}`;
database.pathname = `/${dbName}`;

const isFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.createServer().once("error", () => resolve(false));
    s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
  });

/** A run of `n` free ports in 10000–17999 (below the engines' and the kernel's ephemeral ports). */
async function freeRun(n: number, taken: Set<number>): Promise<number> {
  for (;;) {
    const p = 10000 + Math.floor(Math.random() * 7000);
    let ok = true;
    for (let i = 0; i < n && ok; i++) ok = !taken.has(p + i) && (await isFree(p + i));
    if (!ok) continue;
    for (let i = 0; i < n; i++) taken.add(p + i);
    return p;
  }
}

function llmgw(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [LLMGW_BIN, ...args], { env: { PATH: process.env.PATH!, HOME: os.homedir(), ...env }, encoding: "utf8", timeout: 400_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

let units: StandIn;
let ports: { client: number; admin: number; control: number; temporal: number };

before(async () => {
  if (skip) return;
  const taken = new Set<number>();
  // The server's frontend and the nine ports above it, and its Web UI 1000 above.
  let temporal = await freeRun(10, taken);
  while (!(await isFree(temporal + 1000))) temporal = await freeRun(10, taken);
  ports = { client: await freeRun(1, taken), admin: await freeRun(1, taken), control: await freeRun(1, taken), temporal };
  units = systemdStandIn(path.join(root, "systemd"), path.join(prefix, "etc/systemd/system"));
});

after(async () => {
  if (skip) return;
  for (const n of ["llmgw-gateway", "llmgw-worker", "llmgw-temporal-ui", "llmgw-temporal"]) spawnSync(units.path, ["stop", `${n}.service`]);
  fs.rmSync(root, { recursive: true, force: true });
  const maintenance = new URL(database.href);
  maintenance.pathname = "/postgres";
  const c = new pg.Client({ connectionString: maintenance.href });
  await c.connect();
  try {
    for (const db of [dbName, `${dbName}_temporal`, `${dbName}_temporal_visibility`]) await c.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
  } finally {
    await c.end();
  }
});

describe("llmgw server init --temporal server", { skip }, () => {
  it("installs on the real Temporal server: its databases, its configuration, the namespace, the Web UI, and the platform answers", async () => {
    const r = await llmgw(
      [
        "server", "init", "--yes", "--prefix", prefix, "--systemctl", units.path, "--agent", "no",
        "--temporal", "server", "--temporal-server-dir", defaultServerDir(), "--temporal-port", String(ports.temporal),
        "--host", "127.0.0.1", "--advertise", "127.0.0.1", "--client-port", String(ports.client), "--admin-port", String(ports.admin), "--control-port", String(ports.control),
        ...[`LLMGW_TASK_QUEUE=llmgw-init-ts-${id}`, "LLMGW_METRICS_PORT=0", "LLMGW_WORKER_METRICS_PORT=0", "LLMGW_RUN_METRICS_PORT=0"].flatMap((kv) => ["--set", kv]),
      ],
      { DATABASE_URL: database.toString(), REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6380/10" },
    );
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}\n${units.log("llmgw-temporal")}\n${units.log("llmgw-worker")}\n${units.log("llmgw-gateway")}`);
    assert.match(r.stdout, /temporal-server 1\.32\.0 and its Web UI 2\.54\.1/, "the preflight names the binaries");
    assert.match(r.stdout, new RegExp(`Temporal's databases ${dbName}_temporal and ${dbName}_temporal_visibility at the schema of server 1\\.32\\.0`));
    assert.match(r.stdout, /namespace "default" with the search attributes LlmgwModel, LlmgwNode, LlmgwKind/);
    assert.match(r.stdout, /the gateway answers/);
    assert.deepEqual(units.calls().filter((c) => c.startsWith("enable")), ["enable --now llmgw-temporal.service", "enable --now llmgw-temporal-ui.service", "enable --now llmgw-worker.service", "enable --now llmgw-gateway.service"]);

    const config = path.join(prefix, "var/lib/llmgw/temporal-server/config.yaml");
    assert.equal(fs.statSync(config).mode & 0o777, 0o600, "the server's configuration holds the database password");
    const unit = fs.readFileSync(path.join(prefix, "etc/systemd/system/llmgw-temporal.service"), "utf8");
    assert.match(unit, new RegExp(`^ExecStart=${defaultServerDir()}/temporal-server --config-file ${config} --allow-no-auth start$`, "m"));
    const settings = fs.readFileSync(path.join(prefix, "etc/llmgw/llmgw.env"), "utf8");
    assert.match(settings, new RegExp(`^TEMPORAL_ADDRESS=127\\.0\\.0\\.1:${ports.temporal}$`, "m"));

    // The Web UI answers, and the platform's own ctl reaches the admin API through what init wrote.
    const ui = await fetch(`http://127.0.0.1:${ports.temporal + 1000}/`);
    assert.equal(ui.status, 200);
    const models = await llmgw(["ctl", "models", "--json"], { LLMGW_SETTINGS_FILE: path.join(prefix, "etc/llmgw/llmgw.env") });
    assert.equal(models.code, 0, models.stdout + models.stderr);
    assert.ok(Array.isArray(JSON.parse(models.stdout)));
    // Temporal's history lives in PostgreSQL, not in a file under the data directory.
    assert.equal(fs.existsSync(path.join(prefix, "var/lib/llmgw/temporal/temporal.db")), false);
    const c = new pg.Client({ connectionString: database.toString().replace(`/${dbName}`, `/${dbName}_temporal`) });
    await c.connect();
    try {
      const ns = await c.query<{ name: string }>("SELECT name FROM namespaces");
      assert.ok(ns.rows.some((row) => row.name === "default"), "the namespace is in Temporal's own database");
    } finally {
      await c.end();
    }
  });
});
