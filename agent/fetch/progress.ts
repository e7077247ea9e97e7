// Progress as the caller sees it: at most one message per interval (the last one always goes),
// with a rate measured over the bytes this call moved (resumed bytes do not count as speed).
import type { FetchProgress } from "../../common/generated/proto/llmgw/agent/v1/FetchProgress.ts";

export const PROGRESS_INTERVAL_MS = 250;

export interface ProgressReporter {
  /** Bytes held so far of `total`; sent when the interval has passed. */
  update(bytes: number, total: number): void;
  /** The final message, always sent. */
  done(path: string, bytes: number, total: number): void;
}

export function progressReporter(emit: (p: FetchProgress) => void, intervalMs = PROGRESS_INTERVAL_MS): ProgressReporter {
  const started = Date.now();
  let baseline: number | undefined;
  let lastSent = 0;
  const rate = (bytes: number): number => {
    const secs = (Date.now() - started) / 1000;
    return secs > 0 ? Math.max(0, bytes - (baseline ?? bytes)) / secs : 0;
  };
  return {
    update(bytes, total) {
      baseline ??= bytes;
      const now = Date.now();
      if (now - lastSent < intervalMs) return;
      lastSent = now;
      emit({ bytes, total, bytesPerSecond: rate(bytes), done: false, path: "" });
    },
    done(path, bytes, total) {
      emit({ bytes, total, bytesPerSecond: rate(bytes), done: true, path });
    },
  };
}
