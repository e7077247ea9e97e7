// The Slurm tests' fixture: the real one-node Slurm of scripts/slurm.sh (started here when it is
// not running), Slurm's own commands for what an administrator or a user does, and a clean start:
// no test job left, the node drained by llmgw, no Slurm workflow of an earlier run still open.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Connection, Client, WorkflowNotFoundError } from "@temporalio/client";
import { waitFor } from "../../common/children.ts";
import { startPlatform, type Platform } from "./platform.ts";

/** Slurm's node name, which the Slurm tests' agent takes as its node id. */
export const HOST = os.hostname().split(".")[0]!;
export const JOB_NAME = "llmgw-test";
const REPO = path.resolve(import.meta.dirname, "../..");

export function sh(cmd: string, args: string[], timeoutMs = 30_000): string {
  return execFileSync(cmd, args, { encoding: "utf8", timeout: timeoutMs, stdio: ["ignore", "pipe", "pipe"] });
}

export function startSlurm(): void {
  // Without the lane runner's mark (scripts/test-lanes.ts): the host's Slurm outlives this file, so
  // daemons a test restarts must not be taken for what the file left running and killed after it.
  const { TEST_LANE_RUN: _mark, ...env } = process.env;
  execFileSync("bash", [path.join(REPO, "scripts/slurm.sh"), "start"], { encoding: "utf8", timeout: 600_000, stdio: ["ignore", "pipe", "pipe"], env });
}

/** sinfo's state and reason of the node, e.g. { state: "drained", reason: "llmgw: reclaim" }. */
export function nodeState(): { state: string; reason: string } {
  const [state = "", reason = ""] = sh("sinfo", ["-h", "-N", "-n", HOST, "-o", "%T|%E"]).trim().split("\n")[0]!.split("|");
  return { state: state.replace(/[*~#!%$@^-]+$/, ""), reason: reason === "none" ? "" : reason };
}

export function setDrain(reason: string): void {
  if (nodeState().state !== "idle") {
    try {
      sh("scontrol", ["update", `NodeName=${HOST}`, "State=RESUME"]);
    } catch {
      // not drained (allocated, mixed): nothing to resume
    }
  }
  sh("scontrol", ["update", `NodeName=${HOST}`, "State=DRAIN", `Reason=${reason}`]);
}

/** A batch job that runs until `release` exists; its id. */
export function submitHeld(dir: string): { id: string; release: string } {
  const release = path.join(dir, `release-${Math.random().toString(36).slice(2)}`);
  const id = sh("sbatch", ["--parsable", "-J", JOB_NAME, "-o", "/dev/null", "-w", HOST, "--wrap", `while [ ! -e ${release} ]; do sleep 0.2; done`]).trim().split(";")[0]!;
  return { id, release };
}

export function jobState(id: string): string {
  return sh("squeue", ["-h", "-j", id, "-o", "%T"]).trim();
}

export async function cleanSlate(): Promise<void> {
  try {
    sh("scancel", ["-n", JOB_NAME]);
  } catch {
    // none to cancel
  }
  await waitFor("test jobs to leave Slurm", async () => sh("squeue", ["-h", "-n", JOB_NAME, "-o", "%i"]).trim() === "", 60_000);
  setDrain("llmgw: not lent");
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? "127.0.0.1:7233" });
  try {
    const client = new Client({ connection, namespace: process.env.LLMGW_TEMPORAL_NAMESPACE ?? "llmgw-test" });
    const h = client.workflow.getHandle(`node/${HOST}/slurm`);
    if ((await h.describe()).status.name === "RUNNING") await h.terminate("a new test run starts");
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  } finally {
    await connection.close();
  }
}

export function tmpDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-slurm-"));
}

/** An operation as the admin API shows it, as the Slurm tests read it. */
export interface SlurmOp {
  status: string;
  error: string | null;
  progress: { phase: string; message: string } | null;
}

/** Slurm up and clean, Slurm enabled, and a platform whose one agent is this host's Slurm node. */
export async function startSlurmPlatform(): Promise<Platform> {
  startSlurm();
  await cleanSlate();
  process.env.LLMGW_SLURM_ENABLED = "1";
  return startPlatform({ nodeId: HOST });
}
