// Secrets made at first start and kept in 0600 files under the data directory: the admin token
// and the cluster token. An environment variable of the same purpose wins over the file.
import { hash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

export function readOrCreateSecret(dataDir: string, name: string, fromEnv?: string): string {
  if (fromEnv) return fromEnv;
  const file = path.join(dataDir, name);
  try {
    return fs.readFileSync(file, "utf8").trim();
  } catch {
    fs.mkdirSync(dataDir, { recursive: true });
    const value = randomBytes(24).toString("base64url");
    try {
      fs.writeFileSync(file, value + "\n", { mode: 0o600, flag: "wx" });
      return value;
    } catch {
      // Another process made it first: use theirs.
      return fs.readFileSync(file, "utf8").trim();
    }
  }
}

// One-shot `hash`, not `createHash`: a Hash object carries a weak global handle that each scavenge
// must process after it dies, and the gateway hashes a key on every request.
export function sha256Hex(s: string): string {
  return hash("sha256", s, "hex");
}

export const API_KEY_PREFIX = "sk-llmgw-";

/** A new API key: the secret shown once, its hash (kept) and a display prefix (kept). */
export function newApiKey(): { key: string; hash: string; prefix: string } {
  const key = API_KEY_PREFIX + randomBytes(24).toString("base64url");
  return { key, hash: sha256Hex(key), prefix: key.slice(0, API_KEY_PREFIX.length + 4) };
}
