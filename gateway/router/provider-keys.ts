// The keys of an outside provider, read from a file (one a line, optionally `KEY WEIGHT`; blank
// lines and `#` comments skipped). The file is looked at on the catalog's timer and read again
// only when it changed, so no request ever touches the disk. A key's text never leaves this
// module except as the Authorization header: logs and metrics name a key by its hash prefix.
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { log } from "../../common/logging.ts";

export interface OutsideKey {
  /** `Bearer <key>`, built once. */
  authorization: string;
  weight: number;
  /** sha256 of the key, first 12 hex digits: how logs name it. */
  ref: string;
}

export function keyRef(key: string): string {
  return `sha256:${createHash("sha256").update(key).digest("hex").slice(0, 12)}`;
}

/** Parses a keys file; a line that is not `KEY` or `KEY WEIGHT` (weight > 0) is left out and counted. */
export function parseKeys(text: string): { keys: OutsideKey[]; bad: number[] } {
  const keys: OutsideKey[] = [];
  const bad: number[] = [];
  const seen = new Set<string>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith("#")) return;
    const parts = line.split(/\s+/);
    const weight = parts.length === 2 ? Number(parts[1]) : 1;
    if (parts.length > 2 || !(weight > 0) || !Number.isFinite(weight) || !/^[\x21-\x7e]+$/.test(parts[0]!)) {
      bad.push(i + 1);
      return;
    }
    if (seen.has(parts[0]!)) return;
    seen.add(parts[0]!);
    keys.push({ authorization: `Bearer ${parts[0]}`, weight, ref: keyRef(parts[0]!) });
  });
  return { keys, bad };
}

/** One keys file, re-read when its size, modification time or inode change. */
export class KeysFile {
  keys: OutsideKey[] = [];
  /** Goes up each time the keys were read again (or became unreadable). */
  version = 0;
  private stamp = "";

  constructor(readonly path: string) {}

  /** Looks at the file; true when the keys changed. Never throws: an unreadable file has no keys. */
  refresh(): boolean {
    let stamp: string;
    try {
      const s = statSync(this.path);
      stamp = `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch {
      stamp = "missing";
    }
    if (stamp === this.stamp) return false;
    this.stamp = stamp;
    this.version++;
    if (stamp === "missing") {
      this.keys = [];
      log.warn("outside provider keys file unreadable; its keys are left out", { path: this.path });
      return true;
    }
    try {
      const { keys, bad } = parseKeys(readFileSync(this.path, "utf8"));
      this.keys = keys;
      // Line numbers only: a malformed line may be a key.
      if (bad.length) log.warn("outside provider keys file has lines that are not `KEY [WEIGHT]`; they are left out", { path: this.path, lines: bad });
      log.info("outside provider keys read", { path: this.path, keys: keys.map((k) => k.ref) });
    } catch {
      this.keys = [];
      log.warn("outside provider keys file unreadable; its keys are left out", { path: this.path });
    }
    return true;
  }
}
