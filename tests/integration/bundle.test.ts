// The offline bundle end to end: `llmgw bundle create` makes one tarball; a site with no network
// installs from it alone. The install runs in an empty network namespace (unshare -n: no route to
// anywhere, only its own loopback), from a copy of llmgw unpacked from the bundle itself, in a fresh
// directory, with no NODE_PATH and its working directory elsewhere. The site's own PostgreSQL and
// Redis are the real services', reached through Unix sockets (which a network namespace does not
// cut) and listened for on the namespace's loopback, as a site's would be. `server init --bundle`
// checks every file, installs, and brings the platform up from the bundle (Temporal from it too).
// A bundle that does not match its manifest (a byte changed, a file lost, one added) is refused,
// naming each file, and installs nothing.
import assert from "node:assert/strict";
import { execFile, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { LLMGW_BIN } from "../../common/children.ts";
import { systemdStandIn, type StandIn } from "../helpers/systemd-standin.ts";

const id = randomBytes(4).toString("hex");
const root = fs.mkdtempSync(path.join(os.tmpdir(), `llmgw-bundle-${id}-`));
const bundle = path.join(root, "llmgw.tar.gz");
const site = path.join(root, "site");
const boot = path.join(root, "boot");
const database = new URL(process.env.DATABASE_URL ?? "postgresql://llmgw@127.0.0.1:5433/llmgw_test");
database.pathname = `/llmgw_bundle_${id}`;
const redis = new URL(process.env.REDIS_URL ?? "redis://127.0.0.1:6380/12");

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function sh(cmd: string, args: string[], env: NodeJS.ProcessEnv = { PATH: process.env.PATH!, HOME: os.homedir() }, cwd = root): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(cmd, args, { env, cwd, encoding: "utf8", timeout: 600_000, maxBuffer: 64 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const netnsAllowed = spawnSync("unshare", ["-n", "true"]).status === 0;
const services = [
  { host: database.hostname, port: Number(database.port || 5432), sock: path.join(root, "postgres.sock") },
  { host: redis.hostname, port: Number(redis.port || 6379), sock: path.join(root, "redis.sock") },
];
// Inside the namespace: each service's port on its loopback, piped to the Unix socket.
const BRIDGE = `const net = require("net"); const fs = require("fs"); let n = 0; const all = JSON.parse(process.env.BRIDGES);
for (const [port, sock] of all) net.createServer((c) => { const u = net.connect(sock); c.pipe(u).pipe(c); c.on("error", () => u.destroy()); u.on("error", () => c.destroy()); })
  .listen(port, "127.0.0.1", () => { if (++n === all.length) fs.writeFileSync(process.env.READY, ""); });`;

let summary: { file: string; sha256: string; bytes: number; files: number; name: string; version: string; parts: Record<string, { files: number; bytes: number }> };
let top: string;
let units: StandIn;
let nodeUnits: StandIn;
const nodeSite = path.join(root, "node-site");
const outside: net.Server[] = [];
let bridgePid = 0;

before(async () => {
  const r = await sh(process.execPath, [LLMGW_BIN, "bundle", "create", "--out", bundle, "--llama", "cpu", "--temporal", "cli", "--json"], { ...process.env });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  summary = JSON.parse(r.stdout) as typeof summary;
  top = `${summary.name}-${summary.version}`;
  // What the operator does at the site first: unpack the bundle anywhere, to run its llmgw on it.
  fs.mkdirSync(boot);
  const unpacked = await sh("tar", ["-xzf", bundle, "-C", boot]);
  assert.equal(unpacked.code, 0, unpacked.stderr);
  units = systemdStandIn(path.join(root, "systemd"), path.join(site, "etc/systemd/system"));
  nodeUnits = systemdStandIn(path.join(root, "node-systemd"), path.join(nodeSite, "etc/systemd/system"));
  // Outside: each Unix socket piped to the real service.
  for (const s of services) {
    const server = net.createServer((c) => {
      const u = net.connect(s.port, s.host);
      c.pipe(u).pipe(c);
      c.on("error", () => u.destroy());
      u.on("error", () => c.destroy());
    });
    await new Promise<void>((resolve) => server.listen(s.sock, resolve));
    outside.push(server);
  }
});

after(async () => {
  nodeUnits?.stopAll();
  units?.stopAll();
  for (const u of ["llmgw-gateway", "llmgw-worker", "llmgw-temporal"]) spawnSync(units.path, ["stop", `${u}.service`]);
  if (bridgePid) process.kill(bridgePid, "SIGTERM");
  for (const s of outside) s.close();
  const admin = new URL(database);
  admin.pathname = "/postgres";
  const c = new pg.Client({ connectionString: admin.href });
  await c.connect().then(() => c.query(`DROP DATABASE IF EXISTS "llmgw_bundle_${id}" WITH (FORCE)`)).catch(() => undefined);
  await c.end().catch(() => undefined);
  fs.rmSync(root, { recursive: true, force: true });
});

describe("llmgw bundle create", () => {
  it("writes one tarball: the build, production dependencies for linux-x64, the Temporal CLI, a manifest of every file's sha256", async () => {
    assert.equal(fs.statSync(bundle).size, summary.bytes);
    const sum = createHash("sha256").update(fs.readFileSync(bundle)).digest("hex");
    assert.equal(summary.sha256, sum);
    assert.equal(fs.readFileSync(`${bundle}.sha256`, "utf8"), `${sum}  llmgw.tar.gz\n`, "sha256sum -c's format");

    const names = new Set((fs.readdirSync(path.join(boot, top), { recursive: true, withFileTypes: true }) as fs.Dirent[]).filter((e) => !e.isDirectory()).map((e) => path.relative(path.join(boot, top), path.join(e.parentPath, e.name))));
    const manifest = JSON.parse(fs.readFileSync(path.join(boot, top, "manifest.json"), "utf8")) as { versions: Record<string, string>; files: { path: string; sha256: string }[] };
    assert.equal(names.size, manifest.files.length + 1, "every file in the manifest, and nothing else but it");
    for (const f of manifest.files) assert.ok(names.has(f.path), f.path);
    const has = (p: string) => manifest.files.some((f) => f.path === p || f.path.startsWith(`${p}/`));
    for (const p of ["dist/cli.js", "dist/.built", "dist/common/generated/prisma/client.js", "dist/common/generated/proto/package.json", "bin/llmgw.js", "prisma/migrations", "proto", "temporal/temporal",
      "node_modules/@prisma/client", "node_modules/@temporalio/core-bridge/releases/x86_64-unknown-linux-gnu", "node_modules/@node-llama-cpp/linux-x64", "node_modules/express"]) assert.ok(has(p), `holds ${p}`);
    // Development dependencies, other platforms' builds, and (--llama cpu) the GPU builds are left out.
    for (const p of ["node_modules/eslint", "node_modules/openai", "node_modules/@temporalio/testing", "node_modules/typescript-eslint", "node_modules/@temporalio/core-bridge/releases/aarch64-unknown-linux-gnu",
      "node_modules/@node-llama-cpp/linux-arm64", "node_modules/@node-llama-cpp/linux-x64-cuda", "dist/.tsbuildinfo", "tsconfig.build.json",
      // --temporal cli: the CLI alone (tests/unit/bundle-contents.test.ts lists the default's server binaries).
      "temporal/temporal-server", "temporal/temporal-sql-tool", "temporal/temporal-ui-server"]) assert.ok(!has(p), `leaves out ${p}`);
    const cli = manifest.files.find((f) => f.path === "dist/cli.js")!;
    assert.equal(cli.sha256, createHash("sha256").update(fs.readFileSync(path.join(path.dirname(LLMGW_BIN), "../dist/cli.js"))).digest("hex"));
    assert.match(manifest.versions.temporal!, /^temporal version \d/);
    assert.ok(summary.parts.node_modules!.files > 1000);
  });
});

describe("llmgw server init --bundle", () => {
  it("installs with the network blocked (an empty network namespace) and brings the platform up from the bundle alone", async (t) => {
    if (!netnsAllowed) return t.skip("unshare -n is not allowed here (needs root or user namespaces)");
    const script = [
      "set -e",
      "ip link set lo up",
      // Nothing beyond the loopback: the only way out is the bridges' Unix sockets.
      `[ "$(ip -o link | wc -l)" = 1 ]`,
      `node -e "$BRIDGE" >"$ROOT/bridge.log" 2>&1 </dev/null & echo $! >"$ROOT/bridge.pid"`,
      `i=0; while [ ! -f "$READY" ]; do i=$((i+1)); [ $i -lt 300 ] || exit 9; sleep 0.1; done`,
      "cd /",
      `exec env -i PATH="$PATH" HOME="$HOME" DATABASE_URL="$SITE_DATABASE_URL" REDIS_URL="$SITE_REDIS_URL" node "$ROOT/boot/$TOP/bin/llmgw.js" server init --bundle "$BUNDLE" --prefix "$SITE" --yes --agent no --systemctl "$STANDIN" --host 127.0.0.1 --advertise 127.0.0.1 --wait-s 180`,
    ].join("\n");
    const r = await sh("unshare", ["-n", "--", "sh", "-c", script], {
      PATH: process.env.PATH!, HOME: os.homedir(), BRIDGE, ROOT: root, TOP: top, BUNDLE: bundle, SITE: site, STANDIN: units.path, READY: path.join(root, "ready"),
      BRIDGES: JSON.stringify(services.map((s) => [s.port, s.sock])), SITE_DATABASE_URL: database.toString(), SITE_REDIS_URL: redis.toString(),
    });
    bridgePid = Number(fs.readFileSync(path.join(root, "bridge.pid"), "utf8"));
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}\n${units.log("llmgw-gateway")}\n${units.log("llmgw-temporal")}`);
    const app = path.join(site, "opt/llmgw");
    assert.match(r.stdout, new RegExp(`checking ${summary.files} files against the manifest`));
    assert.match(r.stdout, new RegExp(`installed llmgw ${summary.version} in ${app}`));
    for (const step of ["[1/5] checking this machine", "[3/5] setting up the store", "[5/5] done"]) assert.ok(r.stdout.includes(step), step);
    assert.match(r.stdout, /the gateway answers/);
    assert.deepEqual(fs.readdirSync(path.join(site, "opt")), ["llmgw"], "no staging folder left");
    // The units run the installed copy, and the bundle's Temporal.
    const unit = (n: string) => fs.readFileSync(path.join(site, "etc/systemd/system", `${n}.service`), "utf8");
    assert.match(unit("llmgw-gateway"), new RegExp(`^ExecStart=\\S+ ${app}/bin/llmgw\\.js gateway$`, "m"));
    assert.match(unit("llmgw-temporal"), new RegExp(`^ExecStart=${app}/temporal/temporal server start-dev `, "m"));

    // The installed llmgw, alone: no NODE_PATH, run from elsewhere, in the namespace the platform runs in.
    const inNs = (args: string[], env: Record<string, string> = {}) =>
      sh("nsenter", [`--net=/proc/${bridgePid}/ns/net`, "--", process.execPath, path.join(app, "bin/llmgw.js"), ...args], { PATH: process.env.PATH!, HOME: os.homedir(), ...env }, os.tmpdir());
    const help = await inNs(["--help"]);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /bundle create/);
    const models = await inNs(["ctl", "models", "--json"], { LLMGW_SETTINGS_FILE: path.join(site, "etc/llmgw/llmgw.env") });
    assert.equal(models.code, 0, models.stdout + models.stderr);
    assert.ok(Array.isArray(JSON.parse(models.stdout)), "the admin API answers the installed ctl");
    const doctor = await inNs(["doctor", "--role", "node", "--json"]);
    assert.ok(Array.isArray((JSON.parse(doctor.stdout) as { findings?: unknown[] }).findings), doctor.stdout + doctor.stderr);
    // It runs the compiled build: there is nothing to compile with, and no sources.
    assert.equal(fs.existsSync(path.join(app, "cli.ts")), false);
  });

  it("node join --bundle: a second site installs the agent from the bundle, with the network blocked, and registers", async (t) => {
    if (!bridgePid) return t.skip("the server install above did not run");
    const token = path.join(root, "cluster-token");
    fs.copyFileSync(path.join(site, "etc/llmgw/secrets/cluster-token"), token);
    // In the server's namespace (its Control service on its loopback), from the unpacked bundle's llmgw.
    const r = await sh("nsenter", [`--net=/proc/${bridgePid}/ns/net`, "--", process.execPath, path.join(boot, top, "bin/llmgw.js"),
      "node", "join", "127.0.0.1:7071", "--token-file", token, "--bundle", bundle, "--prefix", nodeSite, "--systemctl", nodeUnits.path,
      "--node-id", `bundle-node-${id}`, "--host", "127.0.0.1", "--advertise", "127.0.0.1", "--agent-port", "7170", "--set", "LLMGW_AGENT_METRICS_PORT=0", "--wait-s", "120"],
    { PATH: process.env.PATH!, HOME: os.homedir() }, os.tmpdir());
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}\n${nodeUnits.log("llmgw-agent")}`);
    const app = path.join(nodeSite, "opt/llmgw");
    assert.match(r.stdout, new RegExp(`checking ${summary.files} files against the manifest`));
    assert.match(r.stdout, new RegExp(`continuing with the installed llmgw: ${app}/bin/llmgw\\.js node join`));
    for (const step of ["[1/4] checking this machine", "[2/4] enrolling", "[3/4] installing the agent", "[4/4] registering"]) assert.ok(r.stdout.includes(step), step);
    assert.match(r.stdout, new RegExp(`node bundle-node-${id} registered`));
    // The agent unit runs the copy the bundle installed, not the one it was started from.
    const unit = fs.readFileSync(path.join(nodeSite, "etc/systemd/system/llmgw-agent.service"), "utf8");
    assert.match(unit, new RegExp(`^ExecStart=\\S+ ${app}/bin/llmgw\\.js agent$`, "m"));
    assert.deepEqual(nodeUnits.calls(), ["daemon-reload", "enable --now llmgw-agent.service"]);
  });

  it("refuses a bundle that does not match its manifest, naming each file, and installs nothing", async () => {
    // Made from the real one, small (repacking a gigabyte is slow): its manifest cut to bin/ and
    // dist/cli.js, and then dist/cli.js has one byte changed (same size), bin/dist.js is lost, a file is added.
    const from = path.join(boot, top);
    const tamperedTop = path.join(root, "tampered", top);
    const manifest = JSON.parse(fs.readFileSync(path.join(from, "manifest.json"), "utf8")) as { files: { path: string }[] };
    manifest.files = manifest.files.filter((f) => f.path.startsWith("bin/") || f.path === "dist/cli.js");
    for (const f of manifest.files) fs.cpSync(path.join(from, f.path), path.join(tamperedTop, f.path));
    fs.writeFileSync(path.join(tamperedTop, "manifest.json"), JSON.stringify(manifest));
    const cli = path.join(tamperedTop, "dist/cli.js");
    const bytes = fs.readFileSync(cli);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 2) ^ 1, bytes.length - 2);
    fs.writeFileSync(cli, bytes);
    fs.rmSync(path.join(tamperedTop, "bin/dist.js"));
    fs.writeFileSync(path.join(tamperedTop, "bin/extra.js"), "process.exit(0);\n");
    const tampered = path.join(root, "tampered.tar.gz");
    assert.equal((await sh("tar", ["-czf", tampered, "-C", path.dirname(tamperedTop), top])).code, 0);

    const prefix = path.join(root, "tampered-site");
    const r = await sh(process.execPath, [LLMGW_BIN, "server", "init", "--bundle", tampered, "--prefix", prefix, "--yes"], { PATH: process.env.PATH!, HOME: os.homedir() });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /refused: the bundle .*tampered\.tar\.gz does not match its manifest; nothing was installed:\n/);
    assert.match(r.stderr, /^ {2}dist\/cli\.js: changed \(sha256 [0-9a-f]{64}, the manifest says [0-9a-f]{64}\)$/m);
    assert.match(r.stderr, /^ {2}bin\/dist\.js: missing$/m);
    assert.match(r.stderr, /^ {2}bin\/extra\.js: not in the manifest$/m);
    assert.deepEqual(fs.readdirSync(path.join(prefix, "opt")), [], "nothing installed, no staging folder left");
    assert.doesNotMatch(r.stdout, /\[1\/5\]/, "the init did not go on");
  });
});
