// Installs llmgw from an offline bundle (launcher/bundle/create.ts) with no network: the tarball is
// unpacked into a staging folder beside the install folder, every file is checked against the
// manifest (sha256 and size; nothing missing, nothing added), and only then is the staging folder
// renamed into place. A bundle that does not match is refused, naming each file, and leaves
// nothing behind. The install folder is <prefix>/opt/llmgw; an earlier one is kept as llmgw.previous.
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { readManifest, verifyTree, type Manifest } from "./manifest.ts";

const run = promisify(execFile);

/** Where a bundle installs llmgw under a prefix ("/" for a real install). */
export const appDirFor = (prefix: string): string => path.join(prefix, "opt", "llmgw");

export interface Installed {
  appDir: string;
  manifest: Manifest;
  /** llmgw's executable in the install. */
  bin: string;
}

/** Unpacks, checks and puts in place the bundle `file` at `appDir`; `say` tells each step. Throws, naming the files, when it does not match its manifest. */
export async function installBundle(file: string, appDir: string, say: (s: string) => void): Promise<Installed> {
  if (!fs.statSync(file, { throwIfNoEntry: false })?.isFile()) throw new Error(`--bundle ${file}: no such file`);
  const parent = path.dirname(appDir);
  fs.mkdirSync(parent, { recursive: true, mode: 0o755 });
  // Beside the install folder (one file system: the rename at the end is whole), private until checked.
  const stage = fs.mkdtempSync(path.join(parent, `.${path.basename(appDir)}-bundle-`));
  try {
    say(`      unpacking ${file} into ${stage} (staging)`);
    // GNU tar refuses members with absolute names or "..": nothing lands outside the staging folder.
    // Owners are not restored from the archive: what is installed belongs to whoever installs.
    // No -z: tar tells the compression (gzip, or none) from the file itself.
    await run("tar", ["-xf", file, "-C", stage, "--no-same-owner", "--delay-directory-restore"], { maxBuffer: 64 << 20 }).catch((err: Error & { stderr?: string }) => {
      throw new Error(`--bundle ${file}: not a bundle tar can read: ${(err.stderr ?? err.message).trim()}`);
    });
    const tops = fs.readdirSync(stage);
    if (tops.length !== 1) throw new Error(`--bundle ${file}: not one llmgw bundle create writes (${tops.length} top-level entries, one expected)`);
    const top = path.join(stage, tops[0]!);
    const manifest = readManifest(top);
    say(`      checking ${manifest.files.length} files against the manifest (${manifest.name} ${manifest.version}, ${manifest.platform}, made ${manifest.created})`);
    const problems = await verifyTree(top, manifest);
    if (problems.length) {
      const shown = problems.slice(0, 20).join("\n  ") + (problems.length > 20 ? `\n  … and ${problems.length - 20} more` : "");
      throw new Error(`refused: the bundle ${file} does not match its manifest; nothing was installed:\n  ${shown}`);
    }
    if (manifest.platform !== `${process.platform}-${process.arch}`) throw new Error(`refused: the bundle is for ${manifest.platform}, this machine is ${process.platform}-${process.arch}; nothing was installed`);
    fs.chmodSync(top, 0o755);
    const previous = `${appDir}.previous`;
    if (fs.existsSync(appDir)) {
      fs.rmSync(previous, { recursive: true, force: true });
      fs.renameSync(appDir, previous);
      say(`      the earlier install kept as ${previous}`);
    }
    fs.renameSync(top, appDir);
    say(`      installed ${manifest.name} ${manifest.version} in ${appDir}`);
    return { appDir, manifest, bin: path.join(appDir, "bin", "llmgw.js") };
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}
