// `llmgw server init --bundle FILE` and `llmgw node join --bundle FILE`: install llmgw from an offline
// bundle (install.ts: checked against its manifest, then put in <prefix>/opt/llmgw), then run the same
// command with the llmgw just installed, so the units it writes start that copy (and a server's
// single-machine Temporal is the bundle's). Nothing here reaches the network.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { appDirFor, installBundle } from "./install.ts";

/** argv without --bundle FILE (or --bundle=FILE): what the installed llmgw's command is given. */
export function withoutBundle(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--bundle") i++;
    else if (!argv[i]!.startsWith("--bundle=")) out.push(argv[i]!);
  }
  return out;
}

/** The commands that install from a bundle, and what each adds to its arguments from the install. */
const COMMANDS = {
  "server init": (appDir: string, args: string[]) => {
    const has = (flag: string) => args.some((a) => a === flag || a.startsWith(`${flag}=`));
    const out = [...args];
    // The bundle's Temporal CLI for the dev server, and its real server's binaries when it carries
    // them (bundle create takes them from the cache), unless others are named.
    if (!has("--temporal-cli")) out.push("--temporal-cli", path.join(appDir, "temporal", "temporal"));
    if (!has("--temporal-server-dir") && fs.existsSync(path.join(appDir, "temporal", "temporal-server"))) out.push("--temporal-server-dir", path.join(appDir, "temporal"));
    return out;
  },
  "node join": (_appDir: string, args: string[]) => args,
} as const;

export async function runFromBundle(command: keyof typeof COMMANDS, file: string, prefix: string, argv: string[]): Promise<number> {
  const say = (s: string) => void process.stdout.write(s + "\n");
  say(`[bundle] installing llmgw from ${file} (no network needed)`);
  let installed;
  try {
    installed = await installBundle(path.resolve(file), appDirFor(prefix), say);
  } catch (err) {
    process.stderr.write(`llmgw ${command}: ${(err as Error).message}\n`);
    return 1;
  }
  const args = COMMANDS[command](installed.appDir, withoutBundle(argv));
  say(`[bundle] continuing with the installed llmgw: ${installed.bin} ${command}`);
  const child = spawn(process.execPath, [installed.bin, ...command.split(" "), ...args], { stdio: "inherit" });
  return new Promise((resolve) => {
    child.on("error", (err) => {
      process.stderr.write(`llmgw ${command}: could not start the installed llmgw: ${err.message}\n`);
      resolve(1);
    });
    child.on("exit", (code, signal) => {
      if (code !== 0) say(`[bundle] llmgw stays installed in ${installed.appDir}: once fixed, run ${installed.bin} ${command} with the same flags (no --bundle)`);
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}
