// The workflow bundle, cached on disk by the hash of what goes into it. Bundling (webpack) costs a
// worker about 4 s of CPU at every start; a restarted worker, or a second one on the same host, now
// reads the bundle the first one wrote. Temporal's docs advise pre-built bundles for the same reason.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { bundleWorkflowCode, DefaultLogger, type WorkflowBundle } from "@temporalio/worker";
import { log } from "../common/logging.ts";

const bundlerLogger = new DefaultLogger("WARN");

/** Relative modules a source file loads at run time (`import type` is erased, so it is left out). */
export function runtimeImports(source: string): string[] {
  const out: string[] = [];
  const statement = /(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[^;"']*?\sfrom\s*)?["'](\.{1,2}\/[^"']+)["']/g;
  for (const m of source.matchAll(statement)) if (!m[2]) out.push(m[3]!);
  return out;
}

/** Every file reachable from the entry points through relative run-time imports, in a stable order. */
export function bundleSources(entries: string[]): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const spec of runtimeImports(fs.readFileSync(file, "utf8"))) visit(path.resolve(path.dirname(file), spec));
  };
  for (const e of entries) visit(path.resolve(e));
  return [...seen].sort();
}

/**
 * The bundle's key: the sources it is made of (paths and contents), and the installed packages
 * (package-lock.json), which hold the SDK and webpack's versions. A change to any of them makes a new key.
 */
export function bundleKey(workflowsPath: string, interceptorModules: string[], lockFile: string): string {
  const h = createHash("sha256");
  for (const file of bundleSources([workflowsPath, ...interceptorModules])) h.update(`${file}\0`).update(fs.readFileSync(file)).update("\0");
  h.update(`interceptors\0${interceptorModules.join("\0")}\0`);
  h.update(fs.existsSync(lockFile) ? fs.readFileSync(lockFile) : "no lock file");
  return h.digest("hex").slice(0, 32);
}

/** Bundles kept: one per source version, so a few versions back stay for workers of those versions. */
const KEEP = 8;

function prune(dir: string, keep: number): void {
  const bundles = fs
    .readdirSync(dir)
    .filter((f) => /^workflows-[0-9a-f]+\.js$/.test(f))
    .map((f) => ({ f, at: fs.statSync(path.join(dir, f)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const { f } of bundles.slice(keep)) fs.rmSync(path.join(dir, f), { force: true });
}

/** The bundle from cacheDir when one with this key is there; else bundled now and written there for the next start. */
export async function cachedWorkflowBundle(opts: { workflowsPath: string; interceptorModules: string[]; lockFile: string; cacheDir: string | null }): Promise<WorkflowBundle> {
  const make = () => bundleWorkflowCode({ workflowsPath: opts.workflowsPath, workflowInterceptorModules: opts.interceptorModules, logger: bundlerLogger });
  if (!opts.cacheDir) return make();
  const file = path.join(opts.cacheDir, `workflows-${bundleKey(opts.workflowsPath, opts.interceptorModules, opts.lockFile)}.js`);
  try {
    return { code: fs.readFileSync(file, "utf8") };
  } catch {
    // Not there yet (or unreadable): bundle it.
  }
  const bundle = await make();
  try {
    fs.mkdirSync(opts.cacheDir, { recursive: true });
    // Written aside and renamed: a worker starting meanwhile reads a whole bundle or none.
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, bundle.code);
    fs.renameSync(tmp, file);
    prune(opts.cacheDir, KEEP);
  } catch (err) {
    log.warn("could not cache the workflow bundle; the next start bundles again", { dir: opts.cacheDir, error: (err as Error).message });
  }
  return { code: bundle.code };
}
