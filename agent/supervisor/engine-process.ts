// An engine as an operating-system process: its environment (the agent's, less its secrets), its
// start (detached, in a process group of its own, output appended to its log), whether a pid is
// still it, signals to its group, and the checks made against it (a port that binds, the health
// path's answer).
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import { giveTo, type EngineUser } from "./engine-user.ts";

/** Variables an engine never inherits from the agent. */
export const WITHHELD_ENV = ["LLMGW_CLUSTER_TOKEN", "LLMGW_ADMIN_TOKEN", "DATABASE_URL", "REDIS_URL", "LLMGW_CLUSTER_TOKEN_FILE", "LLMGW_ADMIN_TOKEN_FILE", "DATABASE_URL_FILE", "REDIS_URL_FILE", "LLMGW_NOTIFY_SECRET_FILE", "LLMGW_SETTINGS_FILE"];

/** Health bodies are a few bytes; more than this is not read. */
const HEALTH_BODY_CAP = 4096;

/** The exit code a shell reports for a process ended by `signal` (128 + its number); -1 when unknown. */
export function signalExitCode(signal: NodeJS.Signals | null): number {
  if (!signal) return -1;
  const n = os.constants.signals[signal];
  return typeof n === "number" ? 128 + n : -1;
}

/**
 * True when `pid` is alive and is still the engine started for this replica: the pid exists and,
 * where /proc is readable, its command line names the replica's port or id (a reused pid does not).
 */
export function isReplicaProcess(pid: number, port: number, id: string): boolean {
  if (!Number.isInteger(pid) || pid <= 1) return false;
  try {
    process.kill(pid, 0);
  } catch {
    // EPERM: a process of another user holds the pid now, so it is not our engine.
    return false;
  }
  let cmdline: string;
  try {
    cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    // No /proc at all (not Linux): the signal check is all there is.
    if (!fs.existsSync("/proc/self")) return true;
    return false;
  }
  const argv = cmdline.split("\0").filter(Boolean);
  if (argv.length === 0) return false; // a zombie
  const p = String(port);
  return argv.some((a) => a === p || a === `--port=${p}` || a.includes(id));
}

/** `signal` to the process group `pid` leads, or to the process alone when it has no group. */
export function killGroup(pid: number, signal: NodeJS.Signals): void {
  if (!Number.isInteger(pid) || pid <= 1) return;
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* gone */
    }
  }
}

/** The health path's status and (capped) body; null when nothing answered in time. */
export function probe(host: string, port: number, pathName: string): Promise<{ status: number; body: string } | null> {
  return new Promise((resolve) => {
    const req = http.get({ host, port, path: pathName, agent: false, timeout: 1000 }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        if (body.length < HEALTH_BODY_CAP) body += chunk.slice(0, HEALTH_BODY_CAP - body.length);
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      res.on("close", () => resolve(null)); // cut off before its end (after it, a no-op)
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(null));
  });
}

export function canBind(port: number, host?: string): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once("error", () => resolve(false));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/**
 * An engine's environment: the agent's own (handed down as it is, less WITHHELD_ENV), then the
 * adapter's additions and the request's (its key included), its GPUs, and under an engine user that
 * user's name and a HOME of its own (`home`).
 */
export function engineEnv(added: Record<string, string>, requested: Record<string, string>, gpus: readonly number[], user: EngineUser | null, home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of WITHHELD_ENV) delete env[k];
  Object.assign(env, added, requested);
  if (gpus.length > 0) {
    // CUDA numbers devices fastest first unless told otherwise; nvidia-smi (and placement) by bus.
    env.CUDA_DEVICE_ORDER = "PCI_BUS_ID";
    env.CUDA_VISIBLE_DEVICES = gpus.join(",");
  }
  if (user) {
    // The agent's HOME is not the engine user's to write: caches go to the replica's directory.
    env.HOME = home;
    env.USER = env.LOGNAME = user.name;
  }
  return env;
}

/**
 * Starts an engine detached, in a process group of its own, its output appended to `logFile` (a
 * descriptor, never a pipe: it goes on serving when the agent stops). Under an engine user its log
 * and `home` become that user's.
 */
export function spawnEngine(o: { id: string; command: string; args: string[]; env: NodeJS.ProcessEnv; cwd: string; logFile: string; home: string; user: EngineUser | null }): ChildProcess {
  const fd = fs.openSync(o.logFile, "a", 0o600);
  try {
    giveTo(o.user, o.home);
    giveTo(o.user, o.logFile);
    fs.writeSync(fd, `[llmgw agent ${new Date().toISOString()}] starting replica ${o.id}: ${o.command} ${o.args.join(" ")}\n`);
    return spawn(o.command, o.args, {
      cwd: o.cwd,
      env: o.env,
      detached: true,
      stdio: ["ignore", fd, fd],
      ...(o.user ? { uid: o.user.uid, gid: o.user.gid } : {}),
    });
  } finally {
    fs.closeSync(fd);
  }
}
