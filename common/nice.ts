// A process's CPU priority (nice) for background work that must not compete with the hot path.
import os from "node:os";
import { log } from "./logging.ts";

/**
 * Sets the calling thread's nice value: on Linux the main thread, where a node process's JavaScript
 * runs (node's helper threads keep theirs). Lowering the priority needs no privilege; a refusal
 * (raising it without root) is logged and the process goes on as it was.
 */
export function setNice(nice: number): void {
  try {
    os.setPriority(nice);
  } catch (err) {
    log.warn("could not set the process's priority; it runs as it was", { nice, error: (err as Error).message });
  }
}
