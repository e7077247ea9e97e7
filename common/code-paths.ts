// Where llmgw's files are, whether this process runs the TypeScript sources (through tsx) or the
// compiled build in dist/ (bin/dist.js decides which at start). Files that are not code (proto/,
// prisma/migrations/, package.json, bin/) are only in the repository root, never in dist/.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { moduleArgs } from "../bin/dist.js";

const here = fileURLToPath(import.meta.url);

/** True in the compiled build (dist/common/code-paths.js), false when tsx runs the sources. */
export const COMPILED = here.endsWith(".js");

/** The repository (package) root: package.json, proto/, prisma/, bin/, dist/. */
export const REPO_ROOT = path.resolve(path.dirname(here), COMPILED ? "../.." : "..");

/** A path under the repository root, for files that are not code. */
export function repoPath(...parts: string[]): string {
  return path.join(REPO_ROOT, ...parts);
}

/**
 * One of llmgw's own modules, by its source path ("workflows/index.ts"), as this process runs it:
 * the compiled .js in dist/, or the .ts itself.
 */
export function codePath(rel: string): string {
  return COMPILED ? path.join(REPO_ROOT, "dist", rel.replace(/\.ts$/, ".js")) : path.join(REPO_ROOT, rel);
}

/**
 * moduleArgs(root, rel): node's arguments that run one of llmgw's modules (source path rel) as a
 * script of the llmgw at root, as bin/llmgw.js would there: compiled when its dist/ is up to date,
 * else through tsx.
 */
export { moduleArgs };
