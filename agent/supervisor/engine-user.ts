// The unprivileged user engines run as (LLMGW_ENGINE_USER): resolved once when the agent starts, so a
// missing user stops the agent with a clear error rather than failing every StartReplica later.
import { execFileSync } from "node:child_process";
import fs from "node:fs";

export interface EngineUser {
  name: string;
  uid: number;
  gid: number;
}

const USER_NAME = /^[A-Za-z_][A-Za-z0-9._-]{0,31}\$?$/;

function idOf(flag: "-u" | "-g", name: string): number {
  const out = execFileSync("id", [flag, name], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 5000 }).trim();
  const n = Number(out);
  if (!Number.isInteger(n) || n < 0) throw new Error(`id ${flag} ${name} answered "${out}"`);
  return n;
}

/**
 * The user's uid and gid, or null when none is configured. Throws when the user does not exist, or
 * when this agent could not switch to it (only root starts processes as another user).
 */
export function resolveEngineUser(name: string | undefined, myUid = process.getuid?.() ?? -1): EngineUser | null {
  if (!name) return null;
  if (!USER_NAME.test(name)) throw new Error(`LLMGW_ENGINE_USER "${name}" is not a user name`);
  let uid: number;
  let gid: number;
  try {
    uid = idOf("-u", name);
    gid = idOf("-g", name);
  } catch (err) {
    const said = String((err as { stderr?: unknown }).stderr ?? (err as Error).message).trim();
    throw new Error(`LLMGW_ENGINE_USER "${name}": no such user on this node (${said}); create it (useradd --system --no-create-home ${name}) or unset the setting`);
  }
  if (myUid !== 0 && myUid !== uid) {
    throw new Error(`LLMGW_ENGINE_USER "${name}" (uid ${uid}) needs the agent to run as root; it runs as uid ${myUid}`);
  }
  return { name, uid, gid };
}

/** Hands `file` (a log, a replica's data directory) to the engine user so the engine may write it. */
export function giveTo(user: EngineUser | null, file: string): void {
  if (user) fs.chownSync(file, user.uid, user.gid);
}
