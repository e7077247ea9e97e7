// Slurm's client commands (scontrol, sinfo, squeue), run with execFile — never a shell — and a
// timeout, so a hung controller cannot hang the agent.
import { execFile } from "node:child_process";
import * as grpc from "@grpc/grpc-js";

/** A Slurm call's failure, with the gRPC code the agent answers it with. */
export class SlurmError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
  }
}

export class SlurmUnavailable extends SlurmError {
  constructor(message: string) {
    super(grpc.status.UNAVAILABLE, message);
  }
}

const TIMEOUT_MS = 10_000;

/** stdout of `cmd args`; a missing command, a timeout or a non-zero exit throws SlurmUnavailable. */
export function slurmCommand(cmd: "scontrol" | "sinfo" | "squeue", args: string[], timeoutMs = TIMEOUT_MS): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 4 << 20, encoding: "utf8" }, (err, stdout, stderr) => {
      if (!err) return resolve(stdout);
      const e = err as NodeJS.ErrnoException & { killed?: boolean };
      const why = e.code === "ENOENT" ? `${cmd} is not installed` : e.killed ? `${cmd} timed out after ${timeoutMs} ms` : (stderr.trim() || e.message).split("\n")[0];
      reject(new SlurmUnavailable(`${cmd} ${args.join(" ")}: ${why}`));
    });
  });
}
