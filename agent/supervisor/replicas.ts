// Engine processes on this node. Each replica is one engine process, started detached in a process
// group of its own with its output appended to a log file (a descriptor, never a pipe), so it goes
// on serving when the agent stops; the next agent adopts it from the record kept on disk.
//
//   <dir>/replicas/<id>.json   the record, written (temp + rename) before StartReplica answers
//   <dir>/logs/<id>.log        the engine's stdout and stderr, mode 0600
//   <dir>/data/<id>/           the engine's own directory (its HOME when it runs as the engine user)
//
// With an engine user (LLMGW_ENGINE_USER) engines run as that user, owning their log and directory.
// States: STARTING until the engine's health path answers ready as its adapter reads it (by
// default a 200; polled every 250 ms) and, on a node with GPUs, the engine's process group holds
// each of its GPUs; then READY; EXITED with its exit code once the process is gone.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import type { ReplicaStatus, StartReplicaRequest__Output } from "../../common/proto.ts";
import { log } from "../../common/logging.ts";
import { ENGINE_API_KEY_ENV, reachableHost, readHealthStatus, type EngineAdapter } from "../engines/adapter.ts";
import { ENGINES } from "../engines/registry.ts";
import { LOG_CAP_BYTES, LOG_CAP_CHECK_MS, watchLogCap } from "./log-cap.ts";
import { giveTo, type EngineUser } from "./engine-user.ts";
import { onItsGpus } from "./gpu-presence.ts";

export type { EngineAdapter } from "../engines/adapter.ts";
export { ENGINES } from "../engines/registry.ts";

/** Variables an engine never inherits from the agent. */
export const WITHHELD_ENV = ["LLMGW_CLUSTER_TOKEN", "LLMGW_ADMIN_TOKEN", "DATABASE_URL", "REDIS_URL", "LLMGW_CLUSTER_TOKEN_FILE", "LLMGW_ADMIN_TOKEN_FILE", "DATABASE_URL_FILE", "REDIS_URL_FILE", "LLMGW_NOTIFY_SECRET_FILE", "LLMGW_SETTINGS_FILE"];

/** An error carrying the gRPC status the agent answers with. */
export class ReplicaError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
  }
}

/** What is kept on disk per replica. No arguments and no environment: those may hold secrets. */
export interface ReplicaRecord {
  id: string;
  model: string;
  version: string;
  engine: string;
  /** The interface the engine listens on; absent in records of agents before engines were bound and keyed. */
  host?: string;
  port: number;
  pid: number;
  gpus: number[];
  startedAtMs: number;
  exitCode?: number;
  exitedAtMs?: number;
}

type State = "REPLICA_STATE_STARTING" | "REPLICA_STATE_READY" | "REPLICA_STATE_EXITED";

interface Replica {
  rec: ReplicaRecord;
  state: State;
  exitCode: number;
  child?: ChildProcess;
  onExit?: (code: number | null, signal: NodeJS.Signals | null) => void;
  healthTimer?: NodeJS.Timeout;
  aliveTimer?: NodeJS.Timeout;
  /** Found dead at agent start: reported as EXITED once, then forgotten. */
  reportOnce?: boolean;
  /** StopReplica asked for this exit. */
  stopping?: boolean;
  /** What the engine's health answer last gave as its reason (logged when it changes). */
  healthReason?: string;
  /** Resolves when the process is known to be gone. */
  gone: Promise<void>;
  markGone: () => void;
}

export interface SupervisorOptions {
  /** <dataDir>/agent/<nodeId> */
  dir: string;
  portMin: number;
  portMax: number;
  repoRoot: string;
  /** Host put in the URL of a replica listening on every interface (the agent's advertised host). */
  urlHost: string;
  /** The interface engines listen on (LLMGW_ENGINE_HOST, by default urlHost). */
  engineHost: string;
  /** The key a replica's engine demands of every caller (common/engine-key.ts). */
  engineKey: (replicaId: string) => string;
  engines?: Record<string, EngineAdapter>;
  /** How often an adopted process is checked for life (a spawned one reports its own exit). */
  aliveCheckMs?: number;
  /** An engine log past this many bytes is emptied (checked every logCapCheckMs). */
  logCapBytes?: number;
  logCapCheckMs?: number;
  /** Engines run as this user (resolveEngineUser); null or absent: as the agent's own. */
  engineUser?: EngineUser | null;
  /** Whether the engine (process group `pgid`) shows up on its GPUs; default asks nvidia-smi. */
  onGpus?: (pgid: number, gpus: readonly number[]) => Promise<boolean>;
}

const REPLICA_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEALTH_POLL_MS = 250;
const DEFAULT_GRACE_MS = 5000;

function signalExitCode(signal: NodeJS.Signals | null): number {
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

/** Health bodies are a few bytes; more than this is not read. */
const HEALTH_BODY_CAP = 4096;

/** The health path's status and (capped) body; null when nothing answered in time. */
function probe(host: string, port: number, pathName: string): Promise<{ status: number; body: string } | null> {
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

function canBind(port: number, host?: string): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once("error", () => resolve(false));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

function writeJsonAtomic(file: string, value: unknown): void {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  const fd = fs.openSync(tmp, "w", 0o600);
  try {
    fs.writeFileSync(fd, JSON.stringify(value, null, 2) + "\n");
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
}

function readRecord(file: string): ReplicaRecord | null {
  try {
    const r = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<ReplicaRecord>;
    if (typeof r.id !== "string" || typeof r.pid !== "number" || typeof r.port !== "number") return null;
    return {
      id: r.id,
      model: String(r.model ?? ""),
      version: String(r.version ?? ""),
      engine: String(r.engine ?? ""),
      ...(typeof r.host === "string" ? { host: r.host } : {}),
      port: r.port,
      pid: r.pid,
      gpus: Array.isArray(r.gpus) ? r.gpus.filter((g): g is number => typeof g === "number") : [],
      startedAtMs: Number(r.startedAtMs ?? 0),
      ...(typeof r.exitCode === "number" ? { exitCode: r.exitCode } : {}),
      ...(typeof r.exitedAtMs === "number" ? { exitedAtMs: r.exitedAtMs } : {}),
    };
  } catch {
    return null;
  }
}

function urlHostPart(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

export class Supervisor {
  private readonly replicas = new Map<string, Replica>();
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly pendingPorts = new Set<number>();
  private readonly engines: Record<string, EngineAdapter>;
  private readonly recordsDir: string;
  private readonly logsDir: string;
  private readonly dataDir: string;
  private nextPort: number;
  private closed = false;
  private readonly stopLogCap: () => void;

  constructor(private readonly opts: SupervisorOptions) {
    if (opts.portMin > opts.portMax) throw new Error(`engine port range ${opts.portMin}-${opts.portMax} is empty`);
    this.engines = opts.engines ?? ENGINES;
    this.recordsDir = path.join(opts.dir, "replicas");
    this.logsDir = path.join(opts.dir, "logs");
    this.dataDir = path.join(opts.dir, "data");
    fs.mkdirSync(this.recordsDir, { recursive: true, mode: 0o700 });
    fs.mkdirSync(this.logsDir, { recursive: true, mode: 0o700 });
    // 0711: the engine user reaches its own directory below without listing the others.
    fs.mkdirSync(this.dataDir, { recursive: true, mode: 0o711 });
    if (opts.engineUser) {
      // mkdir made these 0700: the engine user must pass through to its log and data/<id>.
      for (const d of [path.dirname(opts.dir), opts.dir, this.logsDir]) fs.chmodSync(d, 0o711);
    }
    this.nextPort = opts.portMin;
    this.stopLogCap = watchLogCap(
      () => [...this.replicas.values()].filter((r) => this.alive(r)).map((r) => this.logPath(r.rec.id)),
      opts.logCapBytes ?? LOG_CAP_BYTES,
      opts.logCapCheckMs ?? LOG_CAP_CHECK_MS,
    );
  }

  logPath(id: string): string {
    return path.join(this.logsDir, `${id}.log`);
  }

  /** The log of a replica this node has run, or null (an unknown or malformed id). */
  knownLogPath(id: string): string | null {
    if (!REPLICA_ID.test(id)) return null;
    const file = this.logPath(id);
    return fs.existsSync(file) ? file : null;
  }

  private recordPath(id: string): string {
    return path.join(this.recordsDir, `${id}.json`);
  }

  /** Runs `fn` after every earlier operation on the same replica id has finished. */
  private async serial<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(id) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.locks.set(id, tail);
    try {
      return await run;
    } finally {
      if (this.locks.get(id) === tail) this.locks.delete(id);
    }
  }

  /**
   * Reads the records left by an earlier agent. Live engines are adopted (they keep serving; the
   * first health probe is awaited so they show READY at once); dead ones lose their record and are
   * reported EXITED once.
   */
  async adoptExisting(): Promise<{ adopted: string[]; exited: string[] }> {
    const adopted: string[] = [];
    const exited: string[] = [];
    for (const name of fs.readdirSync(this.recordsDir)) {
      const file = path.join(this.recordsDir, name);
      if (name.endsWith(".tmp")) {
        fs.rmSync(file, { force: true });
        continue;
      }
      if (!name.endsWith(".json")) continue;
      const rec = readRecord(file);
      if (!rec || !REPLICA_ID.test(rec.id) || `${rec.id}.json` !== name) {
        log.warn("unreadable replica record removed", { file });
        fs.rmSync(file, { force: true });
        continue;
      }
      if (this.replicas.has(rec.id)) continue;
      const alive = rec.exitedAtMs === undefined && isReplicaProcess(rec.pid, rec.port, rec.id);
      const r = this.newReplica(rec);
      if (alive) {
        this.replicas.set(rec.id, r);
        this.watchAdopted(r);
        adopted.push(rec.id);
        // Started before engines were keyed: it may answer anyone who reaches its port.
        if (rec.host === undefined) log.warn("adopted an engine started without its key and bind address; replace it (scale down and up, or upgrade)", { replica: rec.id, port: rec.port });
      } else {
        fs.rmSync(file, { force: true });
        r.state = "REPLICA_STATE_EXITED";
        r.exitCode = rec.exitCode ?? -1;
        r.reportOnce = true;
        r.markGone();
        this.replicas.set(rec.id, r);
        exited.push(rec.id);
      }
    }
    await Promise.all(adopted.map((id) => this.checkHealth(this.replicas.get(id)!)));
    for (const id of adopted) {
      const r = this.replicas.get(id)!;
      if (r.state === "REPLICA_STATE_STARTING") this.pollHealth(r);
      log.info("replica adopted", { replica: id, pid: r.rec.pid, port: r.rec.port, state: r.state });
    }
    for (const id of exited) log.info("replica found exited at start", { replica: id });
    return { adopted, exited };
  }

  private newReplica(rec: ReplicaRecord): Replica {
    let markGone!: () => void;
    const gone = new Promise<void>((resolve) => (markGone = resolve));
    return { rec, state: "REPLICA_STATE_STARTING", exitCode: 0, gone, markGone };
  }

  private alive(r: Replica): boolean {
    return r.state !== "REPLICA_STATE_EXITED";
  }

  async start(req: StartReplicaRequest__Output): Promise<ReplicaStatus> {
    const id = req.replicaId;
    if (!REPLICA_ID.test(id)) {
      throw new ReplicaError(
        grpc.status.INVALID_ARGUMENT,
        `replica_id "${id}" must be 1-128 characters of letters, digits, ".", "_" or "-", starting with a letter or digit`,
      );
    }
    return this.serial(id, () => this.startLocked(req));
  }

  private async startLocked(req: StartReplicaRequest__Output): Promise<ReplicaStatus> {
    if (this.closed) throw new ReplicaError(grpc.status.UNAVAILABLE, "the agent is shutting down");
    const id = req.replicaId;
    const existing = this.replicas.get(id);
    if (existing && this.alive(existing)) {
      if (existing.rec.model !== req.model || existing.rec.engine !== req.engine) {
        log.warn("StartReplica for a running replica with other settings; returned unchanged", {
          replica: id,
          running: `${existing.rec.engine}/${existing.rec.model}`,
          asked: `${req.engine}/${req.model}`,
        });
      }
      return this.status(existing);
    }

    const adapter = Object.hasOwn(this.engines, req.engine) ? this.engines[req.engine] : undefined;
    if (!adapter) {
      throw new ReplicaError(
        grpc.status.INVALID_ARGUMENT,
        `unknown engine "${req.engine}"; this agent runs: ${Object.keys(this.engines).join(", ")}`,
      );
    }
    if (!req.model) throw new ReplicaError(grpc.status.INVALID_ARGUMENT, "model is required");
    const refused = adapter.validateArgs(req.args);
    if (refused) throw new ReplicaError(grpc.status.INVALID_ARGUMENT, `engine ${req.engine} refuses the arguments: ${refused}`);
    for (const g of req.gpus) {
      if (!Number.isInteger(g) || g < 0) throw new ReplicaError(grpc.status.INVALID_ARGUMENT, `gpu index ${g} is not valid`);
    }
    for (const k of Object.keys(req.env)) {
      if (!ENV_NAME.test(k)) throw new ReplicaError(grpc.status.INVALID_ARGUMENT, `environment variable name "${k}" is not valid`);
    }

    const host = this.opts.engineHost;
    const port = await this.pickPort(host);
    try {
      // The key is the agent's to set, whatever the request's environment says.
      const keyEnv = { ...req.env, [ENGINE_API_KEY_ENV]: this.opts.engineKey(id) };
      const cmd = adapter.command({
        host,
        port,
        model: req.model,
        weights: req.weights || req.model,
        contextLength: req.contextLength,
        args: [...req.args],
        env: keyEnv,
        repoRoot: this.opts.repoRoot,
      });
      const env: NodeJS.ProcessEnv = { ...process.env };
      for (const k of WITHHELD_ENV) delete env[k];
      Object.assign(env, cmd.env ?? {}, keyEnv);
      if (req.gpus.length > 0) {
        // CUDA numbers devices fastest first unless told otherwise; nvidia-smi (and placement) by bus.
        env.CUDA_DEVICE_ORDER = "PCI_BUS_ID";
        env.CUDA_VISIBLE_DEVICES = req.gpus.join(",");
      }
      const user = this.opts.engineUser ?? null;
      const home = path.join(this.dataDir, id);
      fs.mkdirSync(home, { recursive: true, mode: 0o700 });
      if (user) {
        // The agent's HOME is not the engine user's to write: caches go to the replica's directory.
        env.HOME = home;
        env.USER = env.LOGNAME = user.name;
      }

      const logFile = this.logPath(id);
      const fd = fs.openSync(logFile, "a", 0o600);
      let child: ChildProcess;
      try {
        giveTo(user, home);
        giveTo(user, logFile);
        fs.writeSync(
          fd,
          `[llmgw agent ${new Date().toISOString()}] starting replica ${id}: ${cmd.command} ${cmd.args.join(" ")}\n`,
        );
        child = spawn(cmd.command, cmd.args, {
          cwd: this.opts.repoRoot,
          env,
          detached: true,
          stdio: ["ignore", fd, fd],
          ...(user ? { uid: user.uid, gid: user.gid } : {}),
        });
      } finally {
        fs.closeSync(fd);
      }
      const pid = child.pid;
      if (pid === undefined) {
        const err = await new Promise<Error | undefined>((resolve) => {
          child.once("error", resolve);
          setTimeout(() => resolve(undefined), 100);
        });
        throw new ReplicaError(grpc.status.INTERNAL, `could not start engine ${req.engine}: ${err?.message ?? "no pid"}`);
      }
      child.on("error", (err) => log.warn("engine process error", { replica: id, err }));
      child.unref();

      const rec: ReplicaRecord = {
        id,
        model: req.model,
        version: req.version,
        engine: req.engine,
        host,
        port,
        pid,
        gpus: [...req.gpus],
        startedAtMs: Date.now(),
      };
      const r = this.newReplica(rec);
      r.child = child;
      this.replicas.set(id, r);
      r.onExit = (code, signal) => this.exited(r, code ?? signalExitCode(signal));
      child.once("exit", r.onExit);
      try {
        writeJsonAtomic(this.recordPath(id), rec);
      } catch (err) {
        // Without a record a restarted agent would lose the engine: do not leave it running.
        this.killGroup(pid, "SIGKILL");
        this.replicas.delete(id);
        throw new ReplicaError(grpc.status.INTERNAL, `could not write the replica record: ${(err as Error).message}`);
      }
      this.pollHealth(r);
      log.info("replica started", { replica: id, engine: req.engine, model: req.model, pid, port, log: logFile });
      return this.status(r);
    } finally {
      this.pendingPorts.delete(port);
    }
  }

  /** A port in the range that no replica holds and that binds now, on `host` and on loopback and every interface. */
  private async pickPort(host: string): Promise<number> {
    const { portMin, portMax } = this.opts;
    const span = portMax - portMin + 1;
    const held = new Set<number>(this.pendingPorts);
    for (const r of this.replicas.values()) if (this.alive(r)) held.add(r.rec.port);
    for (let i = 0; i < span; i++) {
      const port = portMin + ((this.nextPort - portMin + i) % span);
      if (held.has(port) || this.pendingPorts.has(port)) continue;
      this.pendingPorts.add(port);
      if ((await canBind(port, "127.0.0.1")) && (await canBind(port)) && (await canBind(port, host))) {
        this.nextPort = port + 1 > portMax ? portMin : port + 1;
        return port;
      }
      this.pendingPorts.delete(port);
    }
    throw new ReplicaError(grpc.status.RESOURCE_EXHAUSTED, `no free engine port in ${portMin}-${portMax}`);
  }

  private adapterOf(r: Replica): EngineAdapter | undefined {
    return Object.hasOwn(this.engines, r.rec.engine) ? this.engines[r.rec.engine] : undefined;
  }

  private async checkHealth(r: Replica): Promise<void> {
    if (r.state !== "REPLICA_STATE_STARTING") return;
    const adapter = this.adapterOf(r);
    const answer = await probe(reachableHost(r.rec.host ?? "", "127.0.0.1"), r.rec.port, adapter?.healthPath ?? "/health");
    if (!answer) return;
    const health = (adapter?.readHealth ?? readHealthStatus)(answer.status, answer.body);
    if (health.reason !== r.healthReason) {
      r.healthReason = health.reason;
      if (health.reason) log.info("replica health", { replica: r.rec.id, ready: health.ready, reason: health.reason });
    }
    if (!health.ready) return;
    const onGpus = this.opts.onGpus ?? onItsGpus;
    if (r.rec.gpus.length > 0 && !(await onGpus(r.rec.pid, r.rec.gpus))) return;
    if (r.state === "REPLICA_STATE_STARTING" && !this.closed) {
      r.state = "REPLICA_STATE_READY";
      log.info("replica ready", { replica: r.rec.id, port: r.rec.port });
    }
  }

  private pollHealth(r: Replica): void {
    let busy = false;
    r.healthTimer = setInterval(() => {
      if (busy) return;
      if (r.state !== "REPLICA_STATE_STARTING" || this.closed) {
        clearInterval(r.healthTimer);
        return;
      }
      busy = true;
      void this.checkHealth(r).finally(() => (busy = false));
    }, HEALTH_POLL_MS);
    r.healthTimer.unref();
  }

  private watchAdopted(r: Replica): void {
    r.aliveTimer = setInterval(() => {
      if (this.closed || !this.alive(r)) {
        clearInterval(r.aliveTimer);
        return;
      }
      if (!isReplicaProcess(r.rec.pid, r.rec.port, r.rec.id)) this.exited(r, -1);
    }, this.opts.aliveCheckMs ?? 500);
    r.aliveTimer.unref();
  }

  private exited(r: Replica, code: number): void {
    clearInterval(r.healthTimer);
    clearInterval(r.aliveTimer);
    if (r.child && r.onExit) r.child.off("exit", r.onExit);
    r.markGone();
    if (!this.alive(r)) return;
    r.state = "REPLICA_STATE_EXITED";
    r.exitCode = code;
    if (this.closed || this.replicas.get(r.rec.id) !== r) return;
    if (r.stopping) log.info("replica exited on request", { replica: r.rec.id, pid: r.rec.pid, exitCode: code });
    else log.warn("replica exited", { replica: r.rec.id, pid: r.rec.pid, exitCode: code });
    // Keep the record, marked exited: a restarted agent reports it once and drops it.
    r.rec.exitCode = code;
    r.rec.exitedAtMs = Date.now();
    try {
      if (fs.existsSync(this.recordPath(r.rec.id))) writeJsonAtomic(this.recordPath(r.rec.id), r.rec);
    } catch (err) {
      log.warn("could not update the replica record", { replica: r.rec.id, err: err as Error });
    }
  }

  private killGroup(pid: number, signal: NodeJS.Signals): void {
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

  /** Waits until the process is gone or `ms` passes; true when gone. */
  private async waitGone(r: Replica, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (!this.alive(r)) return true;
      if (!r.child && !isReplicaProcess(r.rec.pid, r.rec.port, r.rec.id)) {
        this.exited(r, -1);
        return true;
      }
      const wait = Math.min(50, Math.max(1, deadline - Date.now()));
      await Promise.race([r.gone, new Promise((res) => setTimeout(res, wait))]);
    }
    return !this.alive(r);
  }

  /**
   * SIGTERM to the replica's process group, SIGKILL after `graceMs`; the record goes. Stopping an
   * unknown or exited replica succeeds with false.
   */
  async stop(id: string, graceMs = DEFAULT_GRACE_MS): Promise<boolean> {
    if (!id) throw new ReplicaError(grpc.status.INVALID_ARGUMENT, "replica_id is required");
    return this.serial(id, async () => {
      const r = this.replicas.get(id);
      let wasRunning = false;
      if (r && this.alive(r) && (r.child || isReplicaProcess(r.rec.pid, r.rec.port, r.rec.id))) {
        wasRunning = true;
        const pid = r.rec.pid;
        r.stopping = true;
        this.killGroup(pid, "SIGTERM");
        if (!(await this.waitGone(r, graceMs > 0 ? graceMs : DEFAULT_GRACE_MS))) {
          log.warn("replica did not stop in time; killing its process group", { replica: id, pid });
          this.killGroup(pid, "SIGKILL");
          await this.waitGone(r, 5000);
        } else {
          // Children left behind in the group (an engine's workers) go too.
          this.killGroup(pid, "SIGKILL");
        }
        log.info("replica stopped", { replica: id, pid });
      }
      if (r) {
        clearInterval(r.healthTimer);
        clearInterval(r.aliveTimer);
        if (r.child && r.onExit) r.child.off("exit", r.onExit);
        this.replicas.delete(id);
      }
      fs.rmSync(this.recordPath(id), { force: true });
      fs.rmSync(path.join(this.dataDir, id), { recursive: true, force: true });
      return wasRunning;
    });
  }

  status(r: Replica): ReplicaStatus {
    return {
      replicaId: r.rec.id,
      model: r.rec.model,
      version: r.rec.version,
      engine: r.rec.engine,
      port: r.rec.port,
      url: `http://${urlHostPart(reachableHost(r.rec.host ?? "", this.opts.urlHost))}:${r.rec.port}`,
      pid: r.rec.pid,
      state: r.state,
      exitCode: r.state === "REPLICA_STATE_EXITED" ? r.exitCode : 0,
      gpus: [...r.rec.gpus],
      startedAtMs: r.rec.startedAtMs,
    };
  }

  list(): ReplicaStatus[] {
    return [...this.replicas.values()].map((r) => this.status(r));
  }

  /** After a heartbeat carried them: replicas found dead at start are forgotten. */
  reported(ids: Iterable<string>): void {
    for (const id of ids) {
      const r = this.replicas.get(id);
      if (r?.reportOnce) this.replicas.delete(id);
    }
  }

  /**
   * Stops watching. With `stopEngines` every engine is stopped too; otherwise they go on running and
   * the next agent adopts them.
   */
  async close(stopEngines: boolean): Promise<void> {
    if (stopEngines) {
      await Promise.all([...this.replicas.keys()].map((id) => this.stop(id).catch(() => false)));
    }
    this.closed = true;
    this.stopLogCap();
    for (const r of this.replicas.values()) {
      clearInterval(r.healthTimer);
      clearInterval(r.aliveTimer);
      if (r.child && r.onExit) r.child.off("exit", r.onExit);
    }
  }
}
