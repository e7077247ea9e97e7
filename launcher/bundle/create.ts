// `llmgw bundle create [--out FILE] [--llama all|cpu] [--temporal all|cli] [--json]`: one tarball that installs llmgw on a
// machine with no network (`llmgw server init --bundle FILE`): the compiled build (built first when
// stale), the production node_modules for linux-x64, the Temporal binaries, the generated Prisma
// client and gRPC types (compiled into dist/), prisma/migrations, proto/, and manifest.json with
// each file's sha256 and the versions. The system's GNU tar writes it (execFile, no shell): no
// tar library is a dependency of llmgw, and every site has tar and gzip to look inside by hand.
import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs, promisify } from "node:util";
import { REPO_ROOT } from "../../common/code-paths.ts";
import { appEntries, nodeModulesEntries, PLATFORM, productionPackages, temporalEntries, type Entry, type LlamaBuilds, type TemporalBuilds } from "./contents.ts";
import { MANIFEST, mapLimit, sha256File, type Manifest } from "./manifest.ts";

const run = promisify(execFile);

export const CREATE_USAGE = `usage: llmgw bundle create [--out FILE] [--llama all|cpu] [--temporal all|cli] [--json]
  One tarball for a site with no network: install it there with llmgw server init --bundle FILE.
  --out FILE      where to write it (llmgw-<version>-${PLATFORM}.tar.gz here); FILE.sha256 beside it
  --llama all|cpu node-llama-cpp's prebuilt builds: all linux-x64 ones (CPU, CUDA and its runtime
                  libraries, Vulkan; the default) or the CPU build alone (a smaller bundle)
  --temporal all|cli
                  the Temporal CLI and, when this machine built them (scripts/temporal-server.sh),
                  the production server's binaries (the default), or the CLI alone: about 400 MB
                  smaller, for a site that runs the single-machine server or its own Temporal
  --json          the manifest's summary as JSON on stdout (the steps go to stderr)`;

const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;

export interface BundleSummary {
  file: string;
  sha256: string;
  bytes: number;
  name: string;
  version: string;
  platform: string;
  llama: LlamaBuilds;
  files: number;
  unpackedBytes: number;
  parts: Record<string, { files: number; bytes: number }>;
  versions: Record<string, string>;
}

/** The versions a bundle is made of: llmgw, Node.js, the Temporal CLI, and the packages that matter most. */
function versionsOf(root: string, pkg: { version: string; engines?: { node?: string } }, llama: LlamaBuilds, temporalCli: string): Record<string, string> {
  const packages = new Map(productionPackages(root, llama).map((p) => [p.key.replace(/^node_modules\//, ""), p.version]));
  const v: Record<string, string> = { llmgw: pkg.version, "node (built with)": process.version, "node (needed)": pkg.engines?.node ?? "" };
  v.temporal = execFileSync(temporalCli, ["--version"], { encoding: "utf8", timeout: 30_000 }).trim();
  for (const name of ["@temporalio/worker", "@prisma/client", "@grpc/grpc-js", "node-llama-cpp", "express", "undici"]) v[name] = packages.get(name) ?? "";
  return v;
}

export async function bundleCreate(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, strict: true, options: { out: { type: "string" }, llama: { type: "string", default: "all" }, temporal: { type: "string", default: "all" }, json: { type: "boolean", default: false }, help: { type: "boolean", default: false } } });
  if (values.help) return process.stdout.write(CREATE_USAGE + "\n"), 0;
  if (values.llama !== "all" && values.llama !== "cpu") throw new Error(`--llama: all or cpu, not '${values.llama}'`);
  const llama: LlamaBuilds = values.llama;
  if (values.temporal !== "all" && values.temporal !== "cli") throw new Error(`--temporal: all or cli, not '${values.temporal}'`);
  const temporal: TemporalBuilds = values.temporal;
  if (`${process.platform}-${process.arch}` !== PLATFORM) throw new Error(`bundles are made for ${PLATFORM} on ${PLATFORM} (its native binaries are this machine's); this is ${process.platform}-${process.arch}`);
  const root = REPO_ROOT;
  if (!fs.existsSync(path.join(root, "scripts/build.sh"))) throw new Error(`${root} is not a checkout of llmgw (no scripts/build.sh): bundles are made from one`);
  const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { name: string; version: string; engines?: { node?: string } };
  const top = `${pkg.name}-${pkg.version}`;
  const out = path.resolve(values.out ?? `${top}-${PLATFORM}.tar.gz`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  // With --json, stdout holds the summary alone.
  const say = (s: string) => void (values.json ? process.stderr : process.stdout).write(s + "\n");

  say(`[1/5] the compiled build (dist/)`);
  const built = await run("bash", [path.join(root, "scripts/build.sh"), "--if-stale"], { cwd: root, maxBuffer: 64 << 20 });
  say(`      ${built.stdout.trim().split("\n").pop()}`);

  say(`[2/5] listing the files (production dependencies from package-lock.json, for ${PLATFORM}; node-llama-cpp: ${llama === "all" ? "every linux-x64 build" : "the CPU build"})`);
  const parts: Record<string, Entry[]> = { app: appEntries(root), node_modules: nodeModulesEntries(root, llama), temporal: temporalEntries(root, temporal) };
  const entries = Object.values(parts).flat();
  const sizes = new Map(entries.map((e) => [e.rel, fs.statSync(e.src)]));
  const partSizes = Object.fromEntries(Object.entries(parts).map(([k, es]) => [k, { files: es.length, bytes: es.reduce((n, e) => n + sizes.get(e.rel)!.size, 0) }]));
  for (const [k, s] of Object.entries(partSizes)) say(`      ${k.padEnd(13)} ${String(s.files).padStart(6)} files ${mb(s.bytes).padStart(10)}`);

  const unpacked = entries.reduce((n, e) => n + sizes.get(e.rel)!.size, 0);
  say(`[3/5] sha256 of each file (${entries.length} files, ${mb(unpacked)})`);
  const sums = await mapLimit(entries, Math.max(2, os.availableParallelism()), (e) => sha256File(e.src));
  const manifest: Manifest = {
    format: 1,
    name: pkg.name,
    version: pkg.version,
    platform: PLATFORM,
    created: new Date().toISOString(),
    versions: versionsOf(root, pkg, llama, parts.temporal![0]!.src),
    llama,
    files: entries.map((e, i) => ({ path: e.rel, sha256: sums[i]!, size: sizes.get(e.rel)!.size, mode: sizes.get(e.rel)!.mode & 0o777 })),
  };

  say(`[4/5] writing ${out}`);
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-bundle-"));
  try {
    fs.writeFileSync(path.join(stage, MANIFEST), JSON.stringify(manifest, null, 1) + "\n");
    // Files from outside the checkout (the Temporal binaries) are staged under their bundle path.
    const inRoot: string[] = [];
    for (const e of entries) {
      if (e.src === path.join(root, e.rel)) {
        inRoot.push(e.rel);
        continue;
      }
      fs.mkdirSync(path.dirname(path.join(stage, e.rel)), { recursive: true });
      fs.copyFileSync(e.src, path.join(stage, e.rel));
      fs.chmodSync(path.join(stage, e.rel), sizes.get(e.rel)!.mode & 0o777);
    }
    const staged = entries.filter((e) => !inRoot.includes(e.rel)).map((e) => e.rel);
    // NUL-separated names, read verbatim: a name is never taken for an option.
    const list = path.join(stage, ".files");
    fs.writeFileSync(list, inRoot.join("\0") + "\0");
    const partial = `${out}.partial`;
    await run(
      "tar",
      ["-czf", partial, "--no-recursion", "--owner=0", "--group=0", "--numeric-owner", `--transform=s,^,${top}/,`, "-C", stage, MANIFEST, ...staged, "-C", root, "--null", "-T", list],
      { maxBuffer: 64 << 20 },
    );
    fs.renameSync(partial, out);
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }

  const sha256 = await sha256File(out);
  fs.writeFileSync(`${out}.sha256`, `${sha256}  ${path.basename(out)}\n`);
  const bytes = fs.statSync(out).size;
  say(`[5/5] done: ${out} (${mb(bytes)}; ${mb(unpacked)} unpacked), sha256 ${sha256} (in ${path.basename(out)}.sha256: check it with sha256sum -c at the site)`);
  say(`      install it there with: llmgw server init --bundle ${path.basename(out)} (docs/install.md, "Air-gapped")`);
  const summary: BundleSummary = { file: out, sha256, bytes, name: pkg.name, version: pkg.version, platform: PLATFORM, llama, files: entries.length, unpackedBytes: unpacked, parts: partSizes, versions: manifest.versions };
  if (values.json) process.stdout.write(JSON.stringify(summary, null, 2) + "\n");
  return 0;
}
