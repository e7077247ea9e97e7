// llmgw doctor against the real services, against services that are not there, and on a node with
// a stand-in nvidia-smi: each finding's verdict, its fix, the exit status, and --json's shape.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { LLMGW_BIN } from "../../common/children.ts";
import { ensureDatabase, migrate } from "../../common/migrate.ts";
import type { Finding } from "../../doctor/finding.ts";
import { freePort } from "../helpers/platform.ts";

interface Report {
  role: string;
  ok: boolean;
  findings: Finding[];
}

function doctor(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [LLMGW_BIN, "doctor", ...args], { env, encoding: "utf8" }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const byName = (r: Report) => Object.fromEntries(r.findings.map((f) => [f.check, f]));

describe("llmgw doctor", () => {
  const id = randomBytes(4).toString("hex");
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `llmgw-doctor-${id}-`));
  const db = new URL(process.env.DATABASE_URL ?? "postgresql://llmgw@127.0.0.1:5433/llmgw_test");
  db.pathname = `/llmgw_doctor_${id}`;
  const env = { ...process.env, DATABASE_URL: db.toString(), LLMGW_DATA_DIR: dataDir, LLMGW_ADMIN_URL: "" };

  before(async () => {
    await ensureDatabase(db.toString());
    await migrate(db.toString());
  });

  after(async () => {
    const admin = new URL(db);
    admin.pathname = "/postgres";
    const c = new pg.Client({ connectionString: admin.toString() });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS "llmgw_doctor_${id}" WITH (FORCE)`);
    await c.end();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("a control machine with Temporal, a migrated PostgreSQL and Redis passes, --json", async () => {
    const r = await doctor(["--role", "control", "--json"], env);
    const report = JSON.parse(r.stdout) as Report;
    const f = byName(report);
    assert.deepEqual(Object.keys(f).sort(), ["clock", "disk", "postgres", "redis", "temporal", "tls", "webhooks"]);
    assert.equal(f.webhooks!.status, "skip", "no webhooks file set");
    assert.equal(f.tls!.status, "ok", f.tls!.detail);
    assert.match(f.tls!.detail, /mutual TLS under the cluster CA in PostgreSQL/);
    assert.equal(f.temporal!.status, "ok", f.temporal!.detail);
    assert.equal(f.postgres!.status, "ok", f.postgres!.detail);
    assert.match(f.postgres!.detail, /migrations applied/);
    assert.equal(f.redis!.status, "ok", f.redis!.detail);
    assert.equal(f.clock!.status, "ok", f.clock!.detail);
    assert.match(f.clock!.detail, /against PostgreSQL/);
    assert.ok(!r.stdout.includes(db.password || "\0"), "no password printed");
    // disk may warn on a small test machine; it must not fail the run unless it is nearly full.
    assert.equal(r.code, f.disk!.status === "fail" ? 1 : 0);
    assert.equal(report.ok, r.code === 0);
  });

  it("an empty store and services that are not there fail, each with what to do", async () => {
    const closed = await freePort();
    const empty = new URL(db);
    empty.pathname = `/llmgw_doctor_${id}_missing`;
    const r = await doctor(["--role", "control", "--json", "--timeout-ms", "2000"], {
      ...env,
      TEMPORAL_ADDRESS: `127.0.0.1:${closed}`,
      REDIS_URL: `redis://127.0.0.1:${closed}`,
      DATABASE_URL: empty.toString(),
    });
    assert.equal(r.code, 1);
    const f = byName(JSON.parse(r.stdout) as Report);
    assert.equal(f.temporal!.status, "fail");
    assert.match(f.temporal!.fix, /TEMPORAL_ADDRESS/);
    assert.equal(f.redis!.status, "fail");
    assert.match(f.redis!.fix, /REDIS_URL/);
    assert.equal(f.postgres!.status, "fail", "a database that does not exist cannot be connected to");
    assert.match(f.postgres!.fix, /DATABASE_URL/);
  });

  it("the webhooks file: its webhooks by ref, a file others may read warned, a line it cannot read failed", async () => {
    const file = path.join(dataDir, "webhooks");
    const secretPath = `/services/T0/B0/${randomBytes(8).toString("hex")}`;
    const run = async () => {
      const r = await doctor(["--role", "control", "--json"], { ...env, LLMGW_NOTIFY_WEBHOOKS_FILE: file });
      assert.ok(!r.stdout.includes(secretPath), "a webhook's URL is printed");
      return { code: r.code, f: byName(JSON.parse(r.stdout) as Report).webhooks! };
    };
    fs.writeFileSync(file, `# ops\nslack https://hooks.slack.com${secretPath}\njson http://127.0.0.1:9/hook\n`, { mode: 0o600 });
    fs.chmodSync(file, 0o600);
    let { f } = await run();
    assert.equal(f.status, "ok", f.detail);
    assert.match(f.detail, /2 webhook\(s\): slack hooks\.slack\.com\/…[0-9a-f]{8}, json 127\.0\.0\.1:9\/…[0-9a-f]{8}/);
    fs.chmodSync(file, 0o644);
    ({ f } = await run());
    assert.equal(f.status, "warn");
    assert.match(f.fix, /chmod 600/);
    fs.writeFileSync(file, `json https://example.com${secretPath}\nxml https://example.com${secretPath}\n`);
    const bad = await run();
    assert.equal(bad.f.status, "fail");
    assert.match(bad.f.detail, /line 2/);
    assert.equal(bad.code, 1);
  });

  it("a node: the control service, the agent's port and the GPUs, in plain text", async (t) => {
    const listener = net.createServer((s) => s.destroy());
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    t.after(() => listener.close());
    const listening = (listener.address() as net.AddressInfo).port;
    const smi = path.join(dataDir, "nvidia-smi");
    // The columns the agent asks for (GPU_QUERY_COLUMNS): identity, memory, driver, then sensors and PCIe.
    const line = (i: number) => `${i}, NVIDIA H100 80GB HBM3, GPU-00000000-0000-0000-0000-00000000000${i}, 81559, 1, 9.0, 550.54.15, 31, 70.5, 700.00, 0, 5, 5, 16, 16`;
    fs.writeFileSync(smi, `#!/bin/sh\necho "${line(0)}"\necho "${line(1)}"\n`, { mode: 0o755 });
    const nodeEnv = { ...env, LLMGW_NVIDIA_SMI: smi, LLMGW_CONTROL_ADDRESS: `127.0.0.1:${listening}`, LLMGW_AGENT_PORT: String(listening) };

    const json = JSON.parse((await doctor(["--role", "node", "--json"], nodeEnv)).stdout) as Report;
    const f = byName(json);
    assert.deepEqual(Object.keys(f).sort(), ["agent-port", "clock", "control", "disk", "exposure", "gpus", "tls"]);
    assert.equal(f.control!.status, "ok");
    assert.equal(f["agent-port"]!.status, "ok");
    // The stand-in agent listens on loopback: reachable from this host only.
    assert.match(f.exposure!.detail, new RegExp(`agent gRPC ${listening} on 127\\.0\\.0\\.1: this host only`));
    assert.equal(f.gpus!.status, "ok");
    assert.match(f.gpus!.detail, /^2 GPU\(s\): NVIDIA H100 80GB HBM3; driver 550\.54\.15$/);

    const free = await freePort();
    const text = await doctor(["--role", "node"], { ...nodeEnv, LLMGW_NVIDIA_SMI: path.join(dataDir, "absent"), LLMGW_CONTROL_ADDRESS: `127.0.0.1:${free}`, LLMGW_AGENT_PORT: String(free) });
    assert.equal(text.code, 1);
    assert.match(text.stdout, /^FAIL {2}control +the control service at 127\.0\.0\.1:\d+ is not reachable/m);
    assert.match(text.stdout, /^WARN {2}agent-port +no agent listens/m);
    assert.match(text.stdout, /→ start the agent: llmgw agent/);
    assert.match(text.stdout, /^WARN {2}gpus +no GPU found/m);
  });

  it("the agent protocol's TLS: plaintext warned, certificate files that do not fit failed", async () => {
    const run = async (extra: NodeJS.ProcessEnv) => byName(JSON.parse((await doctor(["--role", "node", "--json"], { ...env, ...extra })).stdout) as Report).tls!;
    const plain = await run({ LLMGW_INSECURE_GRPC: "1" });
    assert.equal(plain.status, "warn");
    assert.match(plain.detail, /plaintext/);
    const alone = await run({ LLMGW_TLS_CERT_FILE: path.join(dataDir, "cert.pem"), LLMGW_TLS_KEY_FILE: path.join(dataDir, "key.pem") });
    assert.equal(alone.status, "fail");
    assert.match(alone.detail, /needs LLMGW_TLS_CA_FILE/);
    const missing = await run({ LLMGW_TLS_CA_FILE: path.join(dataDir, "no-ca.pem") });
    assert.equal(missing.status, "fail");
    assert.match(missing.detail, /LLMGW_TLS_CA_FILE .*no-ca\.pem: ENOENT/);
  });

  it("refuses an unknown role", async () => {
    const r = await doctor(["--role", "gpu"], env);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--role is node, control or all/);
  });
});
