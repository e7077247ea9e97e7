// scripts/install.sh after an `npm ci` stopped midway (Ctrl-C): the next run must finish the
// install, where node_modules/.package-lock.json alone once made it skip npm ci. It runs in a
// throwaway project in a temp folder (a tiny package.json and lock, one local dependency whose
// install script can be held), with its own npm cache: the shared node_modules is never touched.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { waitFor } from "../../common/children.ts";

const REPO = path.resolve(import.meta.dirname, "../..");

/**
 * A project with scripts/install.sh and one dependency, held-dep, packed as a local tarball. With
 * HOLD=dep, held-dep's install script waits to be killed (packages half installed); with HOLD=root,
 * the project's own prepare does (as llmgw's generates and compiles), after npm has written
 * node_modules/.package-lock.json. Each says it got there with a file HOLD_DIR/<HOLD>-started.
 */
function makeProject(dir: string): void {
  fs.mkdirSync(path.join(dir, "scripts"));
  fs.copyFileSync(path.join(REPO, "scripts/install.sh"), path.join(dir, "scripts/install.sh"));
  const hold = (where: string, done: string) => `const fs = require("node:fs");
if (process.env.HOLD === "${where}") { fs.writeFileSync(process.env.HOLD_DIR + "/${where}-started", ""); setInterval(() => {}, 1000); }
else ${done}
`;
  const dep = path.join(dir, "dep-src");
  fs.mkdirSync(dep);
  fs.writeFileSync(path.join(dep, "package.json"), JSON.stringify({ name: "held-dep", version: "1.0.0", scripts: { install: "node install.js" } }));
  fs.writeFileSync(path.join(dep, "install.js"), hold("dep", 'fs.writeFileSync("installed", "yes");'));
  npm(["pack", "--pack-destination", dir], dep, dir);
  fs.writeFileSync(path.join(dir, "hold.js"), hold("root", "{}"));
  const pkg = { name: "tiny", version: "1.0.0", private: true, scripts: { prepare: "node hold.js" }, dependencies: { "held-dep": "file:held-dep-1.0.0.tgz" }, allowScripts: { "held-dep": true } };
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify(pkg));
  npm(["install", "--package-lock-only", "--ignore-scripts"], dir, dir);
}

/** npm's settings for the throwaway project: its own cache, no audit, fund or update notices. */
function npmEnv(dir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, npm_config_cache: path.join(dir, ".npm-cache"), npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" };
  delete env.HOLD;
  delete env.HOLD_DIR;
  return env;
}

/** npm in cwd, with the project's own cache (under dir). */
function npm(args: string[], cwd: string, dir: string): void {
  const r = spawnSync("npm", args, { cwd, env: npmEnv(dir), encoding: "utf8" });
  assert.equal(r.status, 0, `npm ${args.join(" ")}: ${r.stderr}`);
}

function install(dir: string, ...args: string[]): { status: number | null; out: string } {
  const r = spawnSync("bash", ["scripts/install.sh", ...args], { cwd: dir, env: npmEnv(dir), encoding: "utf8", timeout: 120_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

const sha256 = (file: string) => createHash("sha256").update(fs.readFileSync(file)).digest("hex");

/** Starts scripts/install.sh, and kills it with npm and the install scripts (a lost terminal) once `hold` is reached. */
async function stopMidway(dir: string, hold: "dep" | "root"): Promise<void> {
  // Its own process group, as a terminal's job: the kill reaches install.sh, npm and the script npm runs.
  const proc = spawn("bash", ["scripts/install.sh"], { cwd: dir, env: { ...npmEnv(dir), HOLD: hold, HOLD_DIR: dir }, detached: true, stdio: "ignore" });
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  await waitFor(`npm ci to reach the ${hold} hold`, async () => fs.existsSync(path.join(dir, `${hold}-started`)), 120_000, 100);
  // SIGKILL, not SIGINT: on Ctrl-C npm rolls node_modules back itself; a killed npm leaves it as it was.
  process.kill(-proc.pid!, "SIGKILL");
  await exited;
}

function assertFinished(dir: string, out: string): void {
  assert.match(out, /npm ci/);
  assert.equal(fs.readFileSync(path.join(dir, "node_modules/held-dep/installed"), "utf8"), "yes");
  assert.equal(fs.readFileSync(path.join(dir, "node_modules/.llmgw-installed"), "utf8").trim(), sha256(path.join(dir, "package-lock.json")));
}

describe("scripts/install.sh after an npm ci stopped midway", () => {
  const dirs: string[] = [];
  /** A fresh project, never installed. */
  const project = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-install-"));
    dirs.push(dir);
    makeProject(dir);
    return dir;
  };
  after(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it("finishes an install killed while a dependency's install script ran", async () => {
    const dir = project();
    await stopMidway(dir, "dep");
    assert.ok(fs.existsSync(path.join(dir, "node_modules/held-dep/package.json")), "npm ci had begun to fill node_modules");
    assert.ok(!fs.existsSync(path.join(dir, "node_modules/held-dep/installed")), "held-dep's install did not finish");
    assert.ok(!fs.existsSync(path.join(dir, "node_modules/.llmgw-installed")), "a stopped install leaves no marker");
    assert.equal(install(dir, "--check").status, 1);
    const next = install(dir);
    assert.equal(next.status, 0, next.out);
    assertFinished(dir, next.out);
  });

  it("finishes an install killed in the project's prepare, though node_modules/.package-lock.json was written", async () => {
    const dir = project();
    await stopMidway(dir, "root");
    assert.ok(fs.existsSync(path.join(dir, "node_modules/.package-lock.json")), "what the old check took for a finished install");
    assert.ok(!fs.existsSync(path.join(dir, "node_modules/.llmgw-installed")), "a stopped install leaves no marker");
    const next = install(dir);
    assert.equal(next.status, 0, next.out);
    assertFinished(dir, next.out);
  });

  it("installs nothing when the marker matches package-lock.json, and again when the lock changes", () => {
    const dir = project();
    const first = install(dir);
    assert.equal(first.status, 0, first.out);
    assertFinished(dir, first.out);
    fs.writeFileSync(path.join(dir, "node_modules/kept"), "");
    const again = install(dir);
    assert.equal(again.status, 0, again.out);
    assert.doesNotMatch(again.out, /npm ci/);
    assert.ok(fs.existsSync(path.join(dir, "node_modules/kept")), "node_modules was left alone");
    assert.equal(install(dir, "--check").status, 0);

    fs.appendFileSync(path.join(dir, "package-lock.json"), "\n");
    assert.equal(install(dir, "--check").status, 1, "another package-lock.json is not installed");
    const changed = install(dir);
    assert.equal(changed.status, 0, changed.out);
    assertFinished(dir, changed.out);
    assert.ok(!fs.existsSync(path.join(dir, "node_modules/kept")), "npm ci installed afresh");
  });

  it("leaves a linked node_modules (another checkout's) alone, and says where to install", () => {
    const dir = project();
    const other = path.join(dir, "other-checkout-node_modules");
    fs.mkdirSync(other);
    fs.writeFileSync(path.join(other, "kept"), "");
    fs.symlinkSync(other, path.join(dir, "node_modules"));
    const r = install(dir);
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, /links to .*other-checkout-node_modules/);
    assert.doesNotMatch(r.out, /npm ci \(/);
    assert.deepEqual(fs.readdirSync(other), ["kept"]);
    fs.writeFileSync(path.join(other, ".llmgw-installed"), sha256(path.join(dir, "package-lock.json")) + "\n");
    assert.equal(install(dir).status, 0, "installed there: nothing to do here");
  });
});
