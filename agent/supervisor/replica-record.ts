// The record kept on disk per replica (<dir>/replicas/<id>.json), from which the next agent adopts
// a running engine. Written whole (temp file, fsync, rename), so a crash leaves the old record or the
// new one, never half of one. No arguments and no environment: those may hold secrets.
import fs from "node:fs";
import path from "node:path";
import { log } from "../../common/logging.ts";

/** A replica id: also a file name, so nothing that could climb out of its directory. */
export const REPLICA_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

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

/** A record as written by this or an earlier agent; null when unreadable. */
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

/** The records of one node's replicas, one file each under `dir`. */
export class ReplicaRecords {
  constructor(readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  path(id: string): string {
    return path.join(this.dir, `${id}.json`);
  }

  write(rec: ReplicaRecord): void {
    writeJsonAtomic(this.path(rec.id), rec);
  }

  /** Rewrites a record that is still there (a stopped replica's is gone and stays gone). */
  update(rec: ReplicaRecord): void {
    if (fs.existsSync(this.path(rec.id))) this.write(rec);
  }

  remove(id: string): void {
    fs.rmSync(this.path(id), { force: true });
  }

  /** Every readable record; what a crash left half-written and what cannot be read are removed. */
  scan(): ReplicaRecord[] {
    const out: ReplicaRecord[] = [];
    for (const name of fs.readdirSync(this.dir)) {
      const file = path.join(this.dir, name);
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
      out.push(rec);
    }
    return out;
  }
}
