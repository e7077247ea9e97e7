// Fetched weights are the agent's (0600 files in 0700 directories). Where engines run as another
// user (LLMGW_ENGINE_USER) that user's group gets read access: engines load the weights but cannot
// change the cache other replicas load from.
import fs from "node:fs";
import path from "node:path";

function grant(p: string, gid: number, bits: number): fs.Stats {
  const st = fs.statSync(p);
  if (st.gid !== gid) fs.chownSync(p, st.uid, gid);
  if ((st.mode & bits) !== bits) fs.chmodSync(p, (st.mode & 0o7777) | bits);
  return st;
}

/**
 * Group `gid` may read `target` (a file, or a directory and all below it) and pass through every
 * directory from `root` down to it (without listing them).
 */
export function shareRead(root: string, target: string, gid: number): void {
  const walk = (p: string): void => {
    const st = grant(p, gid, fs.lstatSync(p).isDirectory() ? 0o050 : 0o040);
    if (st.isDirectory()) for (const name of fs.readdirSync(p)) walk(path.join(p, name));
  };
  walk(target);
  const top = path.resolve(root);
  for (let d = path.dirname(path.resolve(target)); d.startsWith(top); d = path.dirname(d)) {
    grant(d, gid, 0o010);
    if (d === top) break;
  }
}
