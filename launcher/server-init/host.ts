// What an install needs of the host itself: the services' own user, and waiting for a service to answer.
import { spawnSync } from "node:child_process";

/** The system user the control plane runs as, made when missing (useradd --system); its uid and gid. */
export function ensureUser(user: string, home: string): { uid: number; gid: number } {
  const id = (flag: string) => spawnSync("id", [flag, user], { encoding: "utf8" });
  if (id("-u").status !== 0) {
    const r = spawnSync("useradd", ["--system", "--home-dir", home, "--no-create-home", "--shell", "/usr/sbin/nologin", user], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`useradd ${user}: ${(r.stderr || r.error?.message || "").trim()}`);
  }
  return { uid: Number(id("-u").stdout.trim()), gid: Number(id("-g").stdout.trim()) };
}

/** Polls `url` until it answers 2xx or `ms` pass; whether it answered. */
export async function untilAnswers(url: string, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (r.ok) return true;
    } catch {
      // Not up yet.
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return false;
}
