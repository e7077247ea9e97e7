// The control plane as the Helm chart runs it (deploy/helm/llmgw): uid 1000 with no privileges, the
// root filesystem read-only, only /tmp (an emptyDir there, a tmpfs here) and the data directory
// writable, with the ConfigMap's LLMGW_WORKFLOW_BUNDLE_DIR. Each process runs in a mount namespace
// of its own (unshare -m) where / is remounted read-only, and must come up as it does in a pod: the
// gateway migrating its store and answering /health, the Temporal and usage workers polling.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, describe, it } from "node:test";
import pg from "pg";
import { LLMGW_BIN, nodeFlagsFor, waitFor } from "../../common/children.ts";
import { REPO } from "../helpers/settings.ts";
import { freePort } from "../helpers/platform.ts";

const UID = 1000;
const canConfine = process.getuid?.() === 0 && spawnSync("unshare", ["-m", "true"]).status === 0 && spawnSync("setpriv", ["--version"]).status === 0;
const skip = canConfine ? false : "needs root, unshare -m and setpriv (a pod's confinement is made with them)";

/** Remounts / read-only in this namespace, /tmp a fresh tmpfs, the data directory kept writable; then llmgw as uid 1000. */
const CONFINE = `
set -e
mount --make-rprivate /
mount --bind "$DATA" "$DATA"
mount -o remount,bind,ro /
mount -t tmpfs -o mode=1777 tmpfs /tmp
if setpriv --reuid=${UID} --regid=${UID} --clear-groups touch "$REPO/.read-only-probe" 2>/dev/null; then echo "the root filesystem is writable" >&2; exit 97; fi
exec setpriv --reuid=${UID} --regid=${UID} --clear-groups --no-new-privs --inh-caps=-all --bounding-set=-all "$@"
`;

describe("the control plane on a read-only root filesystem", { skip }, () => {
  const id = randomBytes(4).toString("hex");
  // Not under /tmp: the namespace's /tmp is a fresh tmpfs.
  const data = fs.mkdtempSync(`/var/tmp/llmgw-ro-${id}-`);
  fs.chownSync(data, UID, UID);
  const db = new URL(process.env.DATABASE_URL ?? "postgresql://llmgw@127.0.0.1:5433/llmgw_test");
  db.pathname = `/llmgw_ro_${id}`;
  const procs: { name: string; proc: ChildProcess; log: string[] }[] = [];

  function start(name: string, args: string[], env: NodeJS.ProcessEnv) {
    // With the node flags the image's entrypoint gives (bin/docker-entrypoint.sh).
    const proc = spawn("unshare", ["-m", "sh", "-c", CONFINE, "confine", process.execPath, ...nodeFlagsFor(args, { ...process.env, ...env }), LLMGW_BIN, ...args], {
      env: { ...process.env, ...env, DATA: data, REPO },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const log: string[] = [];
    proc.stdout!.on("data", (b: Buffer) => log.push(b.toString()));
    proc.stderr!.on("data", (b: Buffer) => log.push(b.toString()));
    procs.push({ name, proc, log });
    return { proc, log };
  }

  after(async () => {
    for (const p of procs) p.proc.kill("SIGTERM");
    await Promise.all(procs.map((p) => (p.proc.exitCode === null ? new Promise((r) => p.proc.once("exit", r)) : null)));
    fs.rmSync(data, { recursive: true, force: true });
    const admin = new URL(db);
    admin.pathname = "/postgres";
    const c = new pg.Client({ connectionString: admin.toString() });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS "${db.pathname.slice(1)}" WITH (FORCE)`);
    await c.end();
  });

  it("runs the gateway, the Temporal worker and the usage worker as in their pods", async () => {
    const [client, admin, metrics, control] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    const env: NodeJS.ProcessEnv = {
      // As the image and the chart's ConfigMap set them; HOME is the image's, read-only.
      HOME: "/home/node",
      XDG_CACHE_HOME: "",
      LLMGW_DATA_DIR: data,
      LLMGW_WORKFLOW_BUNDLE_DIR: "/tmp/workflow-bundles",
      DATABASE_URL: db.toString(),
      LLMGW_TASK_QUEUE: `llmgw-ro-${id}`,
      LLMGW_TEMPORAL_NAMESPACE: process.env.LLMGW_TEMPORAL_NAMESPACE ?? "llmgw-test",
      LLMGW_CLIENT_PORT: String(client),
      LLMGW_ADMIN_PORT: String(admin),
      LLMGW_METRICS_PORT: String(metrics),
      LLMGW_CONTROL_PORT: String(control),
      LLMGW_WORKER_METRICS_PORT: "0",
      LLMGW_CLUSTER_TOKEN: randomBytes(16).toString("hex"),
      LLMGW_ADMIN_TOKEN: randomBytes(16).toString("hex"),
      LLMGW_NOTIFY_SECRET: randomBytes(16).toString("hex"),
      LLMGW_THINKING_SECRET: randomBytes(16).toString("hex"),
    };
    const all = () => procs.map((p) => `--- ${p.name}\n${p.log.join("").slice(-3000)}`).join("\n");
    const gateway = start("gateway", ["gateway"], env);
    await waitFor("the gateway's /health", async () => gateway.proc.exitCode === null && (await fetch(`http://127.0.0.1:${client}/health`)).ok, 120_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${all()}`);
    });
    const temporal = start("worker-temporal", ["worker", "temporal"], env);
    const usage = start("worker-usage", ["worker", "usage"], env);
    const running = (w: { proc: ChildProcess; log: string[] }, line: RegExp) => async () => {
      if (w.proc.exitCode !== null) throw new Error(`exited ${w.proc.exitCode}`);
      return line.test(w.log.join(""));
    };
    await waitFor("the Temporal worker", running(temporal, /"msg":"temporal worker running"/), 180_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${all()}`);
    });
    await waitFor("the usage worker", running(usage, /"msg":"usage worker running"/), 60_000).catch((err: Error) => {
      throw new Error(`${err.message}\n${all()}`);
    });
    // Nothing was refused on the way (a refused write is only a warning where llmgw can do without,
    // the workflow bundle's cache for one), and the processes' files are where the chart mounts.
    for (const p of procs) {
      const complaints = p.log
        .join("")
        .split("\n")
        .filter((l) => /^\{.*"level":"(warn|error)"/.test(l));
      assert.deepEqual(complaints, [], p.name);
    }
    assert.ok(!fs.existsSync(path.join(REPO, ".read-only-probe")));
    const owners = fs.readdirSync(data).map((f) => fs.statSync(path.join(data, f)).uid);
    assert.ok(owners.every((u) => u === UID), `the data directory's files are uid ${UID}'s: ${owners}`);
  });
});
