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
import fs from "node:fs";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import type { ReplicaStatus, StartReplicaRequest__Output } from "../../common/proto.ts";
import { log } from "../../common/logging.ts";
import { ENGINE_API_KEY_ENV, reachableHost, readHealthStatus, type EngineAdapter } from "../engines/adapter.ts";
import { ENGINES } from "../engines/registry.ts";
import { LOG_CAP_BYTES, LOG_CAP_CHECK_MS, watchLogCap } from "./log-cap.ts";
import type { EngineUser } from "./engine-user.ts";
import { engineEnv, isReplicaProcess, killGroup, probe, signalExitCode, spawnEngine } from "./engine-process.ts";
import { onItsGpus } from "./gpu-presence.ts";
import { EnginePorts } from "./engine-ports.ts";
import { REPLICA_ID, ReplicaRecords, type ReplicaRecord } from "./replica-record.ts";
import { newReplica, replicaStatus, type Replica } from "./replica-state.ts";
import { ReplicaError, checkReplicaId, checkStartRequest } from "./start-request.ts";

export type { EngineAdapter } from "../engines/adapter.ts";
export { ENGINES } from "../engines/registry.ts";
export type { ReplicaRecord } from "./replica-record.ts";

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
  /** The nvidia-smi that says which processes are on which GPU (LLMGW_NVIDIA_SMI). */
  nvidiaSmi: string;
  /** Whether the engine (process group `pgid`) shows up on its GPUs; default asks nvidiaSmi. */
  onGpus?: (pgid: number, gpus: readonly number[]) => Promise<boolean>;
}

const HEALTH_POLL_MS = 250;
const DEFAULT_GRACE_MS = 5000;

export class Supervisor {
  private readonly replicas = new Map<string, Replica>();
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly ports: EnginePorts;
  private readonly engines: Record<string, EngineAdapter>;
  private readonly records: ReplicaRecords;
  private readonly logsDir: string;
  private readonly dataDir: string;
  private closed = false;
  private readonly stopLogCap: () => void;

  constructor(private readonly opts: SupervisorOptions) {
    this.ports = new EnginePorts(opts.portMin, opts.portMax);
    this.engines = opts.engines ?? ENGINES;
    this.records = new ReplicaRecords(path.join(opts.dir, "replicas"));
    this.logsDir = path.join(opts.dir, "logs");
    this.dataDir = path.join(opts.dir, "data");
    fs.mkdirSync(this.logsDir, { recursive: true, mode: 0o700 });
    // 0711: the engine user reaches its own directory below without listing the others.
    fs.mkdirSync(this.dataDir, { recursive: true, mode: 0o711 });
    if (opts.engineUser) {
      // mkdir made these 0700: the engine user must pass through to its log and data/<id>.
      for (const d of [path.dirname(opts.dir), opts.dir, this.logsDir]) fs.chmodSync(d, 0o711);
    }
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
    for (const rec of this.records.scan()) {
      if (this.replicas.has(rec.id)) continue;
      const alive = rec.exitedAtMs === undefined && isReplicaProcess(rec.pid, rec.port, rec.id);
      const r = newReplica(rec);
      if (alive) {
        this.replicas.set(rec.id, r);
        this.watchAdopted(r);
        adopted.push(rec.id);
        // Started before engines were keyed: it may answer anyone who reaches its port.
        if (rec.host === undefined) log.warn("adopted an engine started without its key and bind address; replace it (scale down and up, or upgrade)", { replica: rec.id, port: rec.port });
      } else {
        this.records.remove(rec.id);
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

  private alive(r: Replica): boolean {
    return r.state !== "REPLICA_STATE_EXITED";
  }

  async start(req: StartReplicaRequest__Output): Promise<ReplicaStatus> {
    const id = req.replicaId;
    checkReplicaId(id);
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
      return replicaStatus(existing, this.opts.urlHost);
    }

    const adapter = checkStartRequest(req, this.engines);

    const host = this.opts.engineHost;
    const port = await this.ports.pick(host, [...this.replicas.values()].filter((r) => this.alive(r)).map((r) => r.rec.port));
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
      const user = this.opts.engineUser ?? null;
      const home = path.join(this.dataDir, id);
      const env = engineEnv(cmd.env ?? {}, keyEnv, req.gpus, user, home);
      fs.mkdirSync(home, { recursive: true, mode: 0o700 });
      const logFile = this.logPath(id);
      const child = spawnEngine({ id, command: cmd.command, args: cmd.args, env, cwd: this.opts.repoRoot, logFile, home, user });
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
      const r = newReplica(rec);
      r.child = child;
      this.replicas.set(id, r);
      r.onExit = (code, signal) => this.exited(r, code ?? signalExitCode(signal));
      child.once("exit", r.onExit);
      try {
        this.records.write(rec);
      } catch (err) {
        // Without a record a restarted agent would lose the engine: do not leave it running.
        killGroup(pid, "SIGKILL");
        this.replicas.delete(id);
        throw new ReplicaError(grpc.status.INTERNAL, `could not write the replica record: ${(err as Error).message}`);
      }
      this.pollHealth(r);
      log.info("replica started", { replica: id, engine: req.engine, model: req.model, pid, port, log: logFile });
      return replicaStatus(r, this.opts.urlHost);
    } finally {
      this.ports.release(port);
    }
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
    const onGpus = this.opts.onGpus ?? ((pgid: number, gpus: readonly number[]) => onItsGpus(pgid, gpus, this.opts.nvidiaSmi));
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
      this.records.update(r.rec);
    } catch (err) {
      log.warn("could not update the replica record", { replica: r.rec.id, err: err as Error });
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
        killGroup(pid, "SIGTERM");
        if (!(await this.waitGone(r, graceMs > 0 ? graceMs : DEFAULT_GRACE_MS))) {
          log.warn("replica did not stop in time; killing its process group", { replica: id, pid });
          killGroup(pid, "SIGKILL");
          await this.waitGone(r, 5000);
        } else {
          // Children left behind in the group (an engine's workers) go too.
          killGroup(pid, "SIGKILL");
        }
        log.info("replica stopped", { replica: id, pid });
      }
      if (r) {
        clearInterval(r.healthTimer);
        clearInterval(r.aliveTimer);
        if (r.child && r.onExit) r.child.off("exit", r.onExit);
        this.replicas.delete(id);
      }
      this.records.remove(id);
      fs.rmSync(path.join(this.dataDir, id), { recursive: true, force: true });
      return wasRunning;
    });
  }

  list(): ReplicaStatus[] {
    return [...this.replicas.values()].map((r) => replicaStatus(r, this.opts.urlHost));
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
