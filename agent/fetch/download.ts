// One file into the cache: appended to <dest>.part from where an earlier try stopped, checked
// (size and sha256 when known) and renamed into place, so a file at `dest` is always whole. A file
// whose checksum differs is deleted and fetched once more. However many callers ask for the same
// destination at once, one download runs and all of them see its progress.
import fs from "node:fs";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { log } from "../../common/logging.ts";
import { sha256File } from "./checksum.ts";
import { FetchError } from "./errors.ts";
import { openAt } from "./transport.ts";

export interface FileJob {
  source: string;
  dest: string;
  size?: number;
  sha256?: string;
}

/** Bytes held so far of the file's total (0 while unknown). */
export type OnBytes = (bytes: number, total: number) => void;

/** A transfer that receives nothing for this long is cut, to be resumed by the next try. */
const IDLE_MS = 60_000;

interface Inflight {
  promise: Promise<void>;
  listeners: Set<OnBytes>;
}
const inflight = new Map<string, Inflight>();

export function partPath(dest: string): string {
  return `${dest}.part`;
}

function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/** Appends the rest of the source to the .part file. */
async function transfer(job: FileJob, onBytes: OnBytes): Promise<void> {
  const part = partPath(job.dest);
  let have = sizeOf(part);
  if (job.size !== undefined && have > job.size) have = 0;
  const o = await openAt(job.source, have);
  const total = o.total ?? job.size ?? 0;
  const fh = await fs.promises.open(part, o.offset === 0 ? "w" : "a", 0o600);
  let held = o.offset;
  let idle: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(idle);
    idle = setTimeout(() => o.cancel(), IDLE_MS);
    idle.unref();
  };
  try {
    onBytes(held, total);
    arm();
    for await (const chunk of o.body) {
      await fh.write(chunk);
      held += chunk.length;
      arm();
      onBytes(held, total);
    }
  } catch (err) {
    throw new FetchError(
      grpc.status.UNAVAILABLE,
      `download of ${job.source} stopped at ${held} of ${total || "?"} bytes (${(err as Error).message}); fetch again to resume`,
    );
  } finally {
    clearTimeout(idle);
    await fh.close();
  }
  if (o.total !== null && held !== o.total) {
    throw new FetchError(grpc.status.UNAVAILABLE, `download of ${job.source} ended at ${held} of ${o.total} bytes; fetch again to resume`);
  }
}

/** Why the .part is not the file the job names, or null when it is. */
async function mismatch(job: FileJob, onBytes: OnBytes): Promise<string | null> {
  const part = partPath(job.dest);
  const size = sizeOf(part);
  if (job.size !== undefined && size !== job.size) return `size is ${size} bytes, expected ${job.size}`;
  if (job.sha256) {
    // Hashing a large file takes a while: it goes on reporting the bytes held, so a caller that
    // bounds a fetch by its progress does not take the check for a stall.
    const got = await sha256File(part, () => onBytes(size, size));
    if (got !== job.sha256.toLowerCase()) return `sha256 is ${got}, expected ${job.sha256.toLowerCase()}`;
  }
  return null;
}

async function run(job: FileJob, onBytes: OnBytes): Promise<void> {
  if (fs.existsSync(job.dest)) return;
  fs.mkdirSync(path.dirname(job.dest), { recursive: true, mode: 0o700 });
  for (let attempt = 1; ; attempt++) {
    await transfer(job, onBytes);
    const wrong = await mismatch(job, onBytes);
    if (!wrong) break;
    fs.rmSync(partPath(job.dest), { force: true });
    if (attempt >= 2) {
      throw new FetchError(grpc.status.DATA_LOSS, `${job.source}: ${wrong}; the file was refused and deleted (fetched twice)`);
    }
    log.warn("downloaded file does not match; fetching it again", { source: job.source, why: wrong });
  }
  fs.renameSync(partPath(job.dest), job.dest);
}

/** Downloads `job` unless its destination is already whole; joins a download already running. */
export function downloadFile(job: FileJob, onBytes: OnBytes): Promise<void> {
  let entry = inflight.get(job.dest);
  if (!entry) {
    const listeners = new Set<OnBytes>();
    const promise = run(job, (b, t) => listeners.forEach((l) => l(b, t))).finally(() => inflight.delete(job.dest));
    entry = { promise, listeners };
    inflight.set(job.dest, entry);
  }
  const e = entry;
  e.listeners.add(onBytes);
  return e.promise.finally(() => e.listeners.delete(onBytes));
}
