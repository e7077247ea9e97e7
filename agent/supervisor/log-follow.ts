// Reading an engine log as it grows: the last bytes first, then, when following, new output as it
// lands (polled; a file the cap emptied is read again from its start).
import fs from "node:fs";

export const LOG_POLL_MS = 250;
const CHUNK = 64 << 10;

export interface FollowOptions {
  tailBytes: number;
  follow: boolean;
  /** Stops following (the caller went away). */
  signal: AbortSignal;
  pollMs?: number;
}

export async function* followLog(file: string, o: FollowOptions): AsyncGenerator<Buffer> {
  const fh = await fs.promises.open(file, "r");
  try {
    let offset = Math.max(0, (await fh.stat()).size - o.tailBytes);
    const buf = Buffer.alloc(CHUNK);
    while (!o.signal.aborted) {
      const size = (await fh.stat()).size;
      if (size < offset) offset = 0; // reset by the cap
      if (size > offset) {
        const { bytesRead } = await fh.read(buf, 0, Math.min(CHUNK, size - offset), offset);
        offset += bytesRead;
        yield Buffer.from(buf.subarray(0, bytesRead));
        continue;
      }
      if (!o.follow) return;
      await new Promise((resolve) => setTimeout(resolve, o.pollMs ?? LOG_POLL_MS));
    }
  } finally {
    await fh.close();
  }
}
