// Which build of llmgw a process runs: the compiled one in dist/ (`npm run build`, scripts/build.sh)
// when it is there and at least as new as everything it was built from, else the TypeScript sources
// through tsx. A stale dist/ is a trap in development (an edit that seems to do nothing), so it is
// never run; LLMGW_FROM_SOURCE=1 runs the sources whatever dist/ holds.
// Plain JavaScript: bin/llmgw.js reads it before any TypeScript can be loaded.
import fs from "node:fs";
import path from "node:path";

/** The file scripts/build.sh writes once tsc has finished: its time is the build's. */
export const BUILT_STAMP = path.join("dist", ".built");

/** Inputs of the build besides tsconfig.build.json's include: what generated code and emit depend on. */
const EXTRA_INPUTS = ["tsconfig.json", "tsconfig.build.json", "package-lock.json", "prisma/schema.prisma", "proto"];
/** Generated from prisma/schema.prisma and proto/ (inputs above); scripts/gen.sh rewrites it at every run. */
const GENERATED = path.join("common", "generated");

/**
 * The newest modification time under rel (a file or a folder; abs is its full path), in ms; 0 when
 * it is missing. It runs at every start of llmgw (a ctl command's too: docs/benchmarks.md, "ctl's
 * start"), over some 500 files: paths are joined by hand and a missing one is no exception, which
 * took its CPU from 10–15 ms to 4–6.
 */
function newest(abs, rel) {
  let st;
  try {
    st = fs.statSync(abs, { throwIfNoEntry: false });
  } catch {
    return 0;
  }
  if (!st) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  if (rel === GENERATED) return 0;
  let t = st.mtimeMs; // a removed or renamed file shows only here
  for (const e of fs.readdirSync(abs)) t = Math.max(t, newest(abs + path.sep + e, rel + path.sep + e));
  return t;
}

/** True when root/dist holds a finished build made after the last change to its inputs. */
export function distFresh(root) {
  let built;
  try {
    built = fs.statSync(path.join(root, BUILT_STAMP)).mtimeMs;
  } catch {
    return false;
  }
  let include;
  try {
    include = JSON.parse(fs.readFileSync(path.join(root, "tsconfig.build.json"), "utf8")).include;
  } catch {
    return true; // an install without the build's config (an image): dist/ is all there is
  }
  return [...include, ...EXTRA_INPUTS].every((p) => newest(path.join(root, p), path.normalize(p)) <= built);
}

/** Whether a process of the llmgw at root runs dist/ (true) or the sources through tsx (false). */
export function runsDist(root, env = process.env) {
  return env.LLMGW_FROM_SOURCE !== "1" && distFresh(root);
}

/**
 * Node's arguments that run one of llmgw's modules as a script, the way bin/llmgw.js would run
 * llmgw: rel is its source path ("agent/engines/sim/main.ts").
 */
export function moduleArgs(root, rel, env = process.env) {
  if (runsDist(root, env)) return [path.join(root, "dist", rel.replace(/\.ts$/, ".js"))];
  return ["--import", "tsx", path.join(root, rel)];
}
