// Engine logs are capped: past the limit a file is emptied in place. Engines hold it open with
// O_APPEND, so their next write lands at the new end (offset 0) rather than leaving a hole.
import fs from "node:fs";

export const LOG_CAP_BYTES = 64 << 20;
export const LOG_CAP_CHECK_MS = 10_000;

/** Empties `file` when it is larger than `maxBytes`, leaving a note; true when it did. */
export function capLog(file: string, maxBytes = LOG_CAP_BYTES): boolean {
  let size: number;
  try {
    size = fs.statSync(file).size;
  } catch {
    return false;
  }
  if (size <= maxBytes) return false;
  fs.truncateSync(file, 0);
  fs.appendFileSync(file, `[llmgw agent ${new Date().toISOString()}] log reset: it passed ${maxBytes} bytes\n`);
  return true;
}

/** Checks the files `files()` names every `everyMs`; returns a stop function. */
export function watchLogCap(files: () => string[], maxBytes = LOG_CAP_BYTES, everyMs = LOG_CAP_CHECK_MS): () => void {
  const timer = setInterval(() => {
    for (const f of files()) capLog(f, maxBytes);
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
