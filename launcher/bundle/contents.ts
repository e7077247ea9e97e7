// What an offline bundle holds, as a list of files (where each is here, and its path in the bundle):
// the compiled build, the files it reads at run time, the production dependencies for linux-x64,
// and the Temporal binaries. The dependency tree comes from package-lock.json (what `npm ci
// --omit=dev` would install), read straight from node_modules: nothing is installed or pruned in
// the shared node_modules, and nothing is copied before tar reads it.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** The platform a bundle is for: its native binaries (Temporal, node-llama-cpp, the core bridge) are this machine's. */
export const PLATFORM = "linux-x64";

/**
 * node-llama-cpp's prebuilt builds to keep: "all" keeps every linux-x64 one (CPU, CUDA with its
 * runtime libraries, Vulkan: a GPU site has no internet to fetch them); "cpu" the CPU build alone.
 */
export type LlamaBuilds = "all" | "cpu";

export interface Entry {
  /** Where the file is on this machine. */
  src: string;
  /** Its path inside the bundle, relative to the bundle's top folder. */
  rel: string;
}

interface LockPackage {
  version?: string;
  dev?: boolean;
  os?: string[];
  cpu?: string[];
}

/** Files (not folders) under dir, recursively, each as [absolute path, path relative to dir]; `skip` prunes by relative path. */
function walk(dir: string, skip: (rel: string) => boolean = () => false, base = ""): [string, string][] {
  const out: [string, string][] = [];
  for (const e of fs.readdirSync(path.join(dir, base), { withFileTypes: true })) {
    const rel = path.join(base, e.name);
    if (skip(rel)) continue;
    if (e.isDirectory()) out.push(...walk(dir, skip, rel));
    else if (e.isFile()) out.push([path.join(dir, rel), rel]);
    else throw new Error(`${path.join(dir, rel)}: neither a file nor a folder (a link?): a bundle holds files only`);
  }
  return out;
}

/** Whether a package (its key in package-lock.json) belongs in a linux-x64 production install. */
function wanted(key: string, p: LockPackage, llama: LlamaBuilds): boolean {
  if (p.dev) return false;
  if (p.os && !p.os.includes("linux")) return false;
  if (p.cpu && !p.cpu.includes("x64")) return false;
  // node-llama-cpp's builds for arm say they run on x64 too (x64 cross-compiles them): by name.
  const llamaBuild = /(^|\/)@node-llama-cpp\/([^/]+)$/.exec(key)?.[2];
  if (llamaBuild) return llama === "all" ? llamaBuild.startsWith("linux-x64") : llamaBuild === "linux-x64";
  return true;
}

/** What is dropped inside a kept package: other platforms' native builds of the Temporal core bridge. */
function prunedInside(key: string): (rel: string) => boolean {
  if (key.endsWith("node_modules/@temporalio/core-bridge")) return (rel) => rel.startsWith("releases/") && rel !== "releases/x86_64-unknown-linux-gnu" && !rel.startsWith("releases/x86_64-unknown-linux-gnu/");
  return () => false;
}

/** The production packages, from package-lock.json, each with its version; those not on disk (other platforms' optional ones) are left out. */
export function productionPackages(root: string, llama: LlamaBuilds): { key: string; version: string }[] {
  const lock = JSON.parse(fs.readFileSync(path.join(root, "package-lock.json"), "utf8")) as { packages: Record<string, LockPackage> };
  return Object.entries(lock.packages)
    .filter(([key, p]) => key !== "" && wanted(key, p, llama) && fs.existsSync(path.join(root, key)))
    .map(([key, p]) => ({ key, version: p.version ?? "" }));
}

/** The production node_modules: each kept package's files, less its own node_modules (its kept packages are listed separately). */
export function nodeModulesEntries(root: string, llama: LlamaBuilds): Entry[] {
  const out: Entry[] = [];
  for (const { key } of productionPackages(root, llama)) {
    const prune = prunedInside(key);
    // npm's shims in .bin are links, and nothing at run time calls them.
    for (const [src, rel] of walk(path.join(root, key), (r) => r === "node_modules" || prune(r))) out.push({ src, rel: path.join(key, rel) });
  }
  return out;
}

/** The build and the files it reads at run time (code-paths.ts: bin/, proto/, prisma/, package*.json). */
export function appEntries(root: string): Entry[] {
  const under = (dir: string, skip?: (rel: string) => boolean): Entry[] => walk(path.join(root, dir), skip).map(([src, rel]) => ({ src, rel: path.join(dir, rel) }));
  return [
    ...["package.json", "package-lock.json", "prisma/schema.prisma"].map((rel) => ({ src: path.join(root, rel), rel })),
    ...under("bin"),
    // dist/.built is kept: with no tsconfig.build.json beside it, bin/dist.js runs dist/ when that stamp is there.
    ...under("dist", (rel) => rel === ".tsbuildinfo"),
    ...under("prisma/migrations"),
    ...under("proto"),
    // The trainers that are not TypeScript (lora.py) are run from here; standin.ts is compiled in dist/.
    ...under("scripts/trainers", (rel) => rel.endsWith(".ts")),
  ];
}

/** Where llmgw keeps binaries it built or fetched (the production Temporal server, its sql tool). */
export const toolCache = (): string => path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "llmgw", "bin");

/** Which Temporal binaries a bundle holds: the CLI alone (its dev server), or the production server's too. */
export type TemporalBuilds = "all" | "cli";

/**
 * The Temporal binaries, under temporal/ in the bundle: the CLI (the project's .venv, else the
 * cache), and with `all` the real server, its sql tool and Web UI when built into the cache (any
 * temporal* there: about 400 MB, for sites that run `server init --temporal server`).
 */
export function temporalEntries(root: string, builds: TemporalBuilds = "all"): Entry[] {
  const cache = toolCache();
  const cli = [path.join(root, ".venv/bin/temporal"), path.join(cache, "temporal")].find((f) => fs.existsSync(f));
  if (!cli) throw new Error("no Temporal CLI to bundle: bash scripts/python-tools.sh installs it into .venv");
  const out: Entry[] = [{ src: cli, rel: "temporal/temporal" }];
  if (builds === "all" && fs.existsSync(cache)) {
    for (const name of fs.readdirSync(cache).sort()) {
      const src = path.join(cache, name);
      if (name.startsWith("temporal") && name !== "temporal" && fs.statSync(src).isFile()) out.push({ src, rel: path.join("temporal", name) });
    }
  }
  return out;
}
