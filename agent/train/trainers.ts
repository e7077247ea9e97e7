// Trainer processes on this node, one per run: started detached in their own process group, as
// the engines are (same user, same withheld environment, the GPU pinned), stdout to a progress
// file the agent reads back. Everything about a run is on disk under <dir>/<run_id>, so a
// restarted agent still answers for runs it started. Cancel stops the whole process group.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import type { StartTrainerRequest__Output } from "../../common/generated/proto/llmgw/agent/v1/StartTrainerRequest.ts";
import type { TrainerStatus } from "../../common/generated/proto/llmgw/agent/v1/TrainerStatus.ts";
import { moduleArgs } from "../../common/code-paths.ts";
import { python } from "../engines/adapter.ts";
import { WITHHELD_ENV } from "../supervisor/engine-process.ts";
import { readProgress } from "./progress.ts";

const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const MAX_CHUNK = 1 << 20;
const KILL_GRACE_MS = 5000;

export class TrainerError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
  }
}

interface Record {
  pid: number;
  startedAt: number;
}

/** Which trainer this node runs: "lora" (PyTorch + PEFT on the GPU) or "standin" (no GPU). */
function trainerCommand(kind: string, repoRoot: string): { command: string; args: string[] } {
  if (kind === "standin") return { command: process.execPath, args: moduleArgs(repoRoot, "scripts/trainers/standin.ts") };
  if (kind === "lora") return { command: python(), args: [path.join(repoRoot, "scripts/trainers/lora.py")] };
  throw new TrainerError(grpc.status.FAILED_PRECONDITION, `unknown trainer "${kind}" (LLMGW_TRAINER: lora or standin)`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

export class Trainers {
  /** Exit codes of the trainers this agent process started (others: from their exit file, or gone). */
  private readonly exits = new Map<string, number | null>();

  constructor(private readonly opts: { dir: string; repoRoot: string; trainer: string }) {
    fs.mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
  }

  private runDir(runId: string): string {
    if (!RUN_ID.test(runId)) throw new TrainerError(grpc.status.INVALID_ARGUMENT, `bad run id "${runId}"`);
    return path.join(this.opts.dir, runId);
  }

  private record(runId: string): Record | null {
    try {
      return JSON.parse(fs.readFileSync(path.join(this.runDir(runId), "record.json"), "utf8")) as Record;
    } catch {
      return null;
    }
  }

  /** Starts the run's trainer; a run that exists already is answered as it is. */
  async start(req: StartTrainerRequest__Output): Promise<TrainerStatus> {
    const dir = this.runDir(req.runId);
    if (this.record(req.runId)) return this.status(req.runId);
    const { command, args } = trainerCommand(this.opts.trainer, this.opts.repoRoot);
    fs.mkdirSync(path.join(dir, "out"), { recursive: true, mode: 0o700 });
    const data = path.join(dir, "data.ndjson");
    fs.writeFileSync(data, req.data, { mode: 0o600 });
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of WITHHELD_ENV) delete env[k];
    env.CUDA_VISIBLE_DEVICES = req.gpus.join(",");
    const out = fs.openSync(path.join(dir, "progress.jsonl"), "a", 0o600);
    const err = fs.openSync(path.join(dir, "trainer.log"), "a", 0o600);
    let child;
    try {
      child = spawn(command, [...args, "--data", data, "--out", path.join(dir, "out"), "--base", req.base, "--params", req.paramsJson || "{}", ...(req.gguf ? ["--gguf"] : [])], {
        cwd: this.opts.repoRoot,
        env,
        detached: true,
        stdio: ["ignore", out, err],
      });
    } finally {
      fs.closeSync(out);
      fs.closeSync(err);
    }
    if (child.pid === undefined) throw new TrainerError(grpc.status.INTERNAL, `could not start the trainer (${command})`);
    const runId = req.runId;
    this.exits.set(runId, null);
    child.on("exit", (code, signal) => {
      const exit = code ?? (signal ? 128 : 1);
      this.exits.set(runId, exit);
      fs.writeFileSync(path.join(dir, "exit.json"), JSON.stringify({ code: exit, endedAt: Date.now() }));
    });
    child.unref();
    fs.writeFileSync(path.join(dir, "record.json"), JSON.stringify({ pid: child.pid, startedAt: Date.now() } satisfies Record), { mode: 0o600 });
    return this.status(runId);
  }

  private exitCode(runId: string, rec: Record): number | null {
    const mine = this.exits.get(runId);
    if (mine !== undefined && mine !== null) return mine;
    try {
      return (JSON.parse(fs.readFileSync(path.join(this.runDir(runId), "exit.json"), "utf8")) as { code: number }).code;
    } catch {
      // Started by an earlier agent: alive, or gone without a word.
      return mine === null || alive(rec.pid) ? null : -1;
    }
  }

  async status(runId: string): Promise<TrainerStatus> {
    const dir = this.runDir(runId);
    const rec = this.record(runId);
    if (!rec) throw new TrainerError(grpc.status.NOT_FOUND, `no training run "${runId}" on this node`);
    const p = readProgress(fs.existsSync(path.join(dir, "progress.jsonl")) ? fs.readFileSync(path.join(dir, "progress.jsonl"), "utf8") : "");
    const base = { runId, step: p.step, steps: p.steps, loss: p.loss, peakMemoryMib: p.peakMemoryMib, runSeconds: this.runSeconds(dir, rec) };
    if (fs.existsSync(path.join(dir, "cancelled"))) return { ...base, state: "TRAINER_STATE_CANCELLED", error: "cancelled" };
    const code = this.exitCode(runId, rec);
    if (code === null) return { ...base, state: "TRAINER_STATE_RUNNING" };
    if (code === 0 && p.artifact) return { ...base, state: "TRAINER_STATE_SUCCEEDED", artifactName: p.artifact, ...(await this.artifactSum(dir, p.artifact)) };
    const why = p.error ?? (code === -1 ? "the trainer is gone (it ended while no agent watched it)" : `the trainer exited with code ${code}`);
    return { ...base, state: "TRAINER_STATE_FAILED", error: `${why}; see ${path.join(dir, "trainer.log")}` };
  }

  /** From the trainer's start to its exit (exit.json's stamp, else the file's time), or to now while it runs. */
  private runSeconds(dir: string, rec: Record): number {
    const exitFile = path.join(dir, "exit.json");
    let end = Date.now();
    try {
      const e = JSON.parse(fs.readFileSync(exitFile, "utf8")) as { endedAt?: number };
      end = e.endedAt ?? fs.statSync(exitFile).mtimeMs;
    } catch {
      // running, or gone without a word: counted to now
    }
    return Math.max(0, end - rec.startedAt) / 1000;
  }

  /** Size and sha256 of a finished artifact, hashed once (streamed) and kept beside it. */
  private async artifactSum(dir: string, name: string): Promise<{ artifactBytes: number; artifactSha256: string }> {
    const kept = path.join(dir, "artifact.json");
    try {
      return JSON.parse(fs.readFileSync(kept, "utf8")) as { artifactBytes: number; artifactSha256: string };
    } catch {
      const file = path.join(dir, "out", name);
      const hash = createHash("sha256");
      for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
      const sum = { artifactBytes: fs.statSync(file).size, artifactSha256: hash.digest("hex") };
      fs.writeFileSync(kept, JSON.stringify(sum));
      return sum;
    }
  }

  /** SIGTERM to the trainer's process group, SIGKILL after a grace; marked cancelled first. */
  async cancel(runId: string): Promise<TrainerStatus> {
    const dir = this.runDir(runId);
    const rec = this.record(runId);
    if (!rec) throw new TrainerError(grpc.status.NOT_FOUND, `no training run "${runId}" on this node`);
    const before = await this.status(runId);
    if (before.state !== "TRAINER_STATE_RUNNING") return before;
    fs.writeFileSync(path.join(dir, "cancelled"), "");
    const kill = (sig: NodeJS.Signals) => {
      try {
        process.kill(-rec.pid, sig);
      } catch {
        // the group is gone already
      }
    };
    kill("SIGTERM");
    setTimeout(() => kill("SIGKILL"), KILL_GRACE_MS).unref();
    return this.status(runId);
  }

  /** Up to MAX_CHUNK bytes of a finished run's artifact from `offset`. */
  async read(runId: string, offset: number, length: number): Promise<{ data: Buffer; total: number }> {
    const s = await this.status(runId);
    if (s.state !== "TRAINER_STATE_SUCCEEDED" || !s.artifactName) throw new TrainerError(grpc.status.FAILED_PRECONDITION, `run "${runId}" has no artifact (${s.state})`);
    const fd = fs.openSync(path.join(this.runDir(runId), "out", s.artifactName), "r");
    try {
      const total = fs.fstatSync(fd).size;
      const want = Math.max(0, Math.min(length > 0 ? length : MAX_CHUNK, MAX_CHUNK, total - offset));
      const data = Buffer.alloc(want);
      const n = want > 0 ? fs.readSync(fd, data, 0, want, offset) : 0;
      return { data: data.subarray(0, n), total };
    } finally {
      fs.closeSync(fd);
    }
  }
}
