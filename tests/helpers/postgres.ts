// A throwaway PostgreSQL cluster for a test that stops and starts the database: the shared server
// serves every other test and engineer, so an outage is staged on a cluster of the test's own.
// Run as the `postgres` user (PostgreSQL refuses root), trust auth, loopback only, a free port.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ensureDatabase } from "../../common/migrate.ts";
import { freePort } from "./platform.ts";

const BIN = process.env.LLMGW_PG_BIN ?? "/usr/lib/postgresql/15/bin";

export interface ThrowawayPostgres {
  /** postgresql://llmgw@127.0.0.1:<port>/llmgw, created and empty. */
  url: string;
  port: number;
  stop(): void;
  start(): void;
  /** Stops the cluster and removes its files. */
  destroy(): void;
}

/** As the postgres user when we are root (PostgreSQL will not run as root), else as ourselves. */
function pg(tool: string, args: string[]): string {
  const cmd = path.join(BIN, tool);
  const [file, argv] = process.getuid?.() === 0 ? ["runuser", ["-u", "postgres", "--", cmd, ...args]] : [cmd, args];
  return execFileSync(file, argv, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 });
}

export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-pg-"));
  const data = path.join(dir, "data");
  const logFile = path.join(dir, "postgres.log");
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    fs.chownSync(dir, uid, gid);
  }
  const port = await freePort();
  pg("initdb", ["-D", data, "-U", "llmgw", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  // The socket lives in the cluster's own directory, so nothing is shared with the system server.
  const opts = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off`;
  const cluster: ThrowawayPostgres = {
    url: `postgresql://llmgw@127.0.0.1:${port}/llmgw`,
    port,
    start: () => void pg("pg_ctl", ["start", "-D", data, "-l", logFile, "-o", opts, "-w", "-t", "60"]),
    stop: () => void pg("pg_ctl", ["stop", "-D", data, "-m", "fast", "-w", "-t", "60"]),
    destroy() {
      try {
        pg("pg_ctl", ["stop", "-D", data, "-m", "immediate", "-w", "-t", "30"]);
      } catch {
        // Already stopped.
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    cluster.start();
    await ensureDatabase(cluster.url);
  } catch (err) {
    cluster.destroy();
    throw err;
  }
  return cluster;
}
