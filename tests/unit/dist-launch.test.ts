// Which build bin/llmgw.js runs (bin/dist.js): the compiled one in dist/ only when its stamp is at
// least as new as every input of the build, else the sources through tsx. Each case is a small
// stand-in checkout in a temp folder (the real bin/ files, a cli.ts and a dist/cli.js that say which
// ran), with the repository's node_modules linked in for tsx.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { distFresh, moduleArgs, runsDist } from "../../bin/dist.js";

const REPO = path.resolve(import.meta.dirname, "../..");
const dirs: string[] = [];
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Sets every file's time under root to `at` (seconds), so that the case's own writes order them. */
function age(root: string, at: number): void {
  for (const f of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (f.isSymbolicLink()) continue;
    fs.utimesSync(path.join(f.parentPath, f.name), at, at);
  }
  fs.utimesSync(root, at, at);
}

/** A checkout whose last build (dist/.built) came after every other file. */
function checkout(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-dist-"));
  dirs.push(root);
  fs.mkdirSync(path.join(root, "bin"));
  for (const f of ["llmgw.js", "dist.js"]) fs.copyFileSync(path.join(REPO, "bin", f), path.join(root, "bin", f));
  fs.writeFileSync(path.join(root, "package.json"), JSON.stringify({ type: "module" }));
  fs.writeFileSync(path.join(root, "tsconfig.build.json"), JSON.stringify({ include: ["common", "cli.ts"] }));
  fs.mkdirSync(path.join(root, "common/generated/prisma"), { recursive: true });
  fs.writeFileSync(path.join(root, "common/generated/prisma/client.ts"), "export {};\n");
  fs.writeFileSync(path.join(root, "common/util.ts"), "export const x: number = 1;\n");
  fs.mkdirSync(path.join(root, "prisma"));
  fs.writeFileSync(path.join(root, "prisma/schema.prisma"), "// schema\n");
  fs.writeFileSync(path.join(root, "cli.ts"), 'const from: string = "sources";\nconsole.log(from);\n');
  fs.mkdirSync(path.join(root, "dist"));
  fs.writeFileSync(path.join(root, "dist/cli.js"), 'console.log("dist");\n');
  const t = Date.now() / 1000 - 3600;
  age(root, t);
  fs.writeFileSync(path.join(root, "dist/.built"), "");
  fs.utimesSync(path.join(root, "dist/.built"), t + 60, t + 60);
  fs.symlinkSync(path.join(REPO, "node_modules"), path.join(root, "node_modules"));
  return root;
}

/** A file edited now: newer than the build. */
const touch = (root: string, rel: string) => fs.utimesSync(path.join(root, rel), new Date(), new Date());

function launch(root: string, env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync(process.execPath, [path.join(root, "bin/llmgw.js")], { cwd: root, env: { ...process.env, LLMGW_FROM_SOURCE: "", ...env }, encoding: "utf8", timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

describe("bin/llmgw.js and bin/dist.js", () => {
  it("run dist/ when it was built after every input", () => {
    const root = checkout();
    assert.equal(distFresh(root), true);
    assert.equal(launch(root), "dist");
  });

  it("run the sources through tsx once a source is newer than the build, or with LLMGW_FROM_SOURCE=1", () => {
    const root = checkout();
    assert.equal(launch(root, { LLMGW_FROM_SOURCE: "1" }), "sources");
    touch(root, "common/util.ts");
    assert.equal(distFresh(root), false);
    assert.equal(launch(root), "sources");
  });

  it("count the schema as an input, and a file added to a source folder, but not the generated code", () => {
    const root = checkout();
    touch(root, "common/generated/prisma/client.ts");
    assert.equal(distFresh(root), true, "scripts/gen.sh rewrites common/generated at every run");
    touch(root, "prisma/schema.prisma");
    assert.equal(distFresh(root), false);

    const added = checkout();
    fs.writeFileSync(path.join(added, "common/new.ts"), "export {};\n");
    assert.equal(distFresh(added), false);
  });

  it("run the sources when there is no finished build", () => {
    const root = checkout();
    fs.rmSync(path.join(root, "dist/.built"));
    assert.equal(distFresh(root), false);
    assert.equal(launch(root), "sources");
  });

  it("start llmgw's scripts the same way (moduleArgs)", () => {
    const root = checkout();
    assert.deepEqual(moduleArgs(root, "agent/engines/sim/main.ts", {}), [path.join(root, "dist/agent/engines/sim/main.js")]);
    assert.deepEqual(moduleArgs(root, "agent/engines/sim/main.ts", { LLMGW_FROM_SOURCE: "1" }), ["--import", "tsx", path.join(root, "agent/engines/sim/main.ts")]);
    assert.equal(runsDist("/nonexistent", {}), false);
  });
});
