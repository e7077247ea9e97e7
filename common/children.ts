// Starting llmgw's own processes as children (used by `llmgw up` and by the tests), each with
// its output appended to a log file, and stopping them with SIGTERM then SIGKILL.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { gatewayNodeFlags } from "../gateway/heap-tuning.ts";
import { repoPath } from "./code-paths.ts";
import { loadConfig } from "./config.ts";

export const LLMGW_BIN = repoPath("bin", "llmgw.js");

export interface Child {
  name: string;
  proc: ChildProcess;
  logFile: string;
  exited: Promise<number | null>;
}

export function startChild(name: string, args: string[], opts: { env: NodeJS.ProcessEnv; logDir: string }): Child {
  fs.mkdirSync(opts.logDir, { recursive: true });
  const logFile = path.join(opts.logDir, `${name}.log`);
  const fd = fs.openSync(logFile, "a", 0o600);
  const proc = spawn(process.execPath, [...nodeFlagsFor(args, opts.env), LLMGW_BIN, ...args], { env: opts.env, stdio: ["ignore", fd, fd] });
  fs.closeSync(fd);
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  return { name, proc, logFile, exited };
}

/** Node's own flags for an llmgw command: the gateway's GC threads (gateway/heap-tuning.ts). */
export function nodeFlagsFor(args: string[], env: NodeJS.ProcessEnv): string[] {
  return args[0] === "gateway" ? gatewayNodeFlags(loadConfig(env)) : [];
}

export async function stopChild(c: Child, graceMs = 15_000): Promise<void> {
  if (c.proc.exitCode !== null || c.proc.signalCode !== null) return;
  c.proc.kill("SIGTERM");
  const timer = setTimeout(() => c.proc.kill("SIGKILL"), graceMs);
  await c.exited;
  clearTimeout(timer);
}

export function tail(file: string, lines = 20): string {
  try {
    return fs.readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

/** Polls `check` until it returns a value, or fails after `timeoutMs` with `what` in the message. */
export async function waitFor<T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs = 60_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastErr ? `: ${(lastErr as Error).message}` : ""}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
