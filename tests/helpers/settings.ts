// The settings llmgw's code reads: common/config.ts's schema, and the few LLMGW_* variables read
// straight from the environment (engine paths, stand-ins). Found by reading the sources, so a new
// setting is seen the moment some code reads it.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SETTINGS } from "../../common/config.ts";

export const REPO = fileURLToPath(new URL("../../", import.meta.url));
const SKIP = new Set(["node_modules", "tests", "generated", ".git", ".data", "docs", "deploy"]);

export function sourceFiles(dir = REPO): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(e.name)) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(p));
    else if (e.name.endsWith(".ts")) out.push(p);
  }
  return out;
}

/** Setting name → the source files that read it (relative paths). */
export function settingsReadByCode(): Map<string, string[]> {
  const read = new Map<string, string[]>(SETTINGS.map((s) => [s, ["common/config.ts"]]));
  for (const file of sourceFiles()) {
    const text = fs.readFileSync(file, "utf8");
    for (const m of text.matchAll(/\benv\.(LLMGW_[A-Z0-9_]+)|\benv\[["'](LLMGW_[A-Z0-9_]+)["']\]/g)) {
      const name = (m[1] ?? m[2])!;
      const rel = path.relative(REPO, file);
      const files = read.get(name) ?? [];
      if (!files.includes(rel)) files.push(rel);
      read.set(name, files);
    }
  }
  return read;
}
