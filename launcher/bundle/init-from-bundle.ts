// `llmgw server init --bundle FILE`: installs llmgw from an offline bundle (install.ts: checked
// against its manifest, then put in <prefix>/opt/llmgw), then runs the usual init with the llmgw it
// installed, so the units it writes start that copy, and its Temporal is the bundle's. Nothing here
// reaches the network.
import { spawn } from "node:child_process";
import path from "node:path";
import { appDirFor, installBundle } from "./install.ts";

/** argv without --bundle FILE (or --bundle=FILE): what the installed llmgw's server init is given. */
export function withoutBundle(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--bundle") i++;
    else if (!argv[i]!.startsWith("--bundle=")) out.push(argv[i]!);
  }
  return out;
}

export async function initFromBundle(file: string, prefix: string, argv: string[]): Promise<number> {
  const say = (s: string) => void process.stdout.write(s + "\n");
  say(`[bundle] installing llmgw from ${file} (no network needed)`);
  let installed;
  try {
    installed = await installBundle(path.resolve(file), appDirFor(prefix), say);
  } catch (err) {
    process.stderr.write(`llmgw server init: ${(err as Error).message}\n`);
    return 1;
  }
  const args = withoutBundle(argv);
  // The bundle's Temporal CLI for the single-machine Temporal, unless another is named.
  if (!args.some((a) => a === "--temporal-cli" || a.startsWith("--temporal-cli="))) args.push("--temporal-cli", path.join(installed.appDir, "temporal", "temporal"));
  say(`[bundle] continuing with the installed llmgw: ${installed.bin} server init`);
  const child = spawn(process.execPath, [installed.bin, "server", "init", ...args], { stdio: "inherit" });
  return new Promise((resolve) => {
    child.on("error", (err) => {
      process.stderr.write(`llmgw server init: could not start the installed llmgw: ${err.message}\n`);
      resolve(1);
    });
    child.on("exit", (code, signal) => {
      if (code !== 0) say(`[bundle] llmgw stays installed in ${installed.appDir}: once fixed, run ${installed.bin} server init with the same flags (no --bundle)`);
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}
