// A bundle's manifest (manifest.json at its top): every file it holds with its sha256, size and
// mode, and the versions it was made of. An install checks the unpacked files against it, all of
// them, before any is put in place: a file changed, missing or added is refused by name.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

export const MANIFEST = "manifest.json";

export interface ManifestFile {
  path: string;
  sha256: string;
  size: number;
  /** Permission bits (0o755 for the executables). */
  mode: number;
}

export interface Manifest {
  format: 1;
  name: string;
  version: string;
  platform: string;
  created: string;
  /** What it was made of: llmgw, the Node.js it was built with, the Temporal CLI, key packages. */
  versions: Record<string, string>;
  /** node-llama-cpp's prebuilt builds kept ("all" linux-x64 ones, or "cpu"). */
  llama: string;
  files: ManifestFile[];
}

/** sha256 of a file, read as a stream (some are hundreds of MB). */
export function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash("sha256");
    fs.createReadStream(file)
      .on("error", reject)
      .on("data", (d) => h.update(d))
      .on("end", () => resolve(h.digest("hex")));
  });
}

/** fn over items, `n` at a time, results in order. */
export async function mapLimit<T, R>(items: T[], n: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

/** Everything under dir that is not a folder, relative to it, with what it is. */
function tree(dir: string, base = ""): { rel: string; file: boolean }[] {
  const out: { rel: string; file: boolean }[] = [];
  for (const e of fs.readdirSync(path.join(dir, base), { withFileTypes: true })) {
    const rel = base ? `${base}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...tree(dir, rel));
    else out.push({ rel, file: e.isFile() });
  }
  return out;
}

/** Reads and checks the shape of an unpacked bundle's manifest. */
export function readManifest(dir: string): Manifest {
  let m: Manifest;
  try {
    m = JSON.parse(fs.readFileSync(path.join(dir, MANIFEST), "utf8")) as Manifest;
  } catch (err) {
    throw new Error(`the bundle has no readable ${MANIFEST}: ${(err as Error).message}`);
  }
  if (m.format !== 1 || !Array.isArray(m.files) || m.files.some((f) => typeof f.path !== "string" || !/^[0-9a-f]{64}$/.test(f.sha256))) {
    throw new Error(`the bundle's ${MANIFEST} is not one llmgw bundle create writes`);
  }
  return m;
}

/**
 * The differences between an unpacked bundle (dir) and its manifest, one line each naming the
 * file: changed (sha256 or size), missing, or not in the manifest. Empty when they match.
 */
export async function verifyTree(dir: string, m: Manifest): Promise<string[]> {
  const listed = new Map(m.files.map((f) => [f.path, f]));
  const problems: string[] = [];
  const present = tree(dir).filter((e) => e.rel !== MANIFEST);
  for (const e of present) {
    if (!listed.has(e.rel)) problems.push(`${e.rel}: not in the manifest`);
    else if (!e.file) problems.push(`${e.rel}: not a plain file`);
  }
  const seen = new Set(present.map((e) => e.rel));
  for (const f of m.files) if (!seen.has(f.path)) problems.push(`${f.path}: missing`);
  const toHash = m.files.filter((f) => seen.has(f.path));
  const sums = await mapLimit(toHash, 4, async (f) => {
    const file = path.join(dir, f.path);
    const st = fs.lstatSync(file);
    if (!st.isFile()) return null;
    if (st.size !== f.size) return `${f.path}: changed (${st.size} bytes, the manifest says ${f.size})`;
    const sum = await sha256File(file);
    return sum === f.sha256 ? null : `${f.path}: changed (sha256 ${sum}, the manifest says ${f.sha256})`;
  });
  problems.push(...sums.filter((s): s is string => s !== null));
  return problems;
}
