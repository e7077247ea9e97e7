// The session `llmgw ctl login` keeps for later commands: in ctl's settings file, JSON, mode 0600
// (LLMGW_CTL_FILE, default $XDG_CONFIG_HOME/llmgw/ctl.json or ~/.config/llmgw/ctl.json),
// field `session` (the llmgw-sess-… token) beside `url` (the gateway it came from). LLMGW_SESSION
// in the environment wins over the file. ctl sends it as `Authorization: Bearer llmgw-sess-…`.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export interface CtlSettingsFile {
  /** The gateway's client URL where the session was made; the admin API is served there under /api/v1. */
  url?: string;
  /** The session token (llmgw-sess-…). */
  session?: string;
  /** When the session ends at the latest (ISO). */
  sessionExpiresAt?: string;
  /** The identity provider it came from. */
  provider?: string;
}

export function ctlSettingsFilePath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.LLMGW_CTL_FILE) return path.resolve(env.LLMGW_CTL_FILE);
  return path.join(env.XDG_CONFIG_HOME || path.join(os.homedir(), ".config"), "llmgw", "ctl.json");
}

export function readCtlSettingsFile(env: NodeJS.ProcessEnv = process.env): CtlSettingsFile {
  const file = ctlSettingsFilePath(env);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {
    return {};
  }
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as CtlSettingsFile) : {};
  } catch {
    throw new Error(`${file} is not JSON; remove it and run llmgw ctl login again`);
  }
}

/** Writes the file whole, readable by its owner alone (0600), through a rename so a reader never sees half. */
export function writeCtlSettingsFile(s: CtlSettingsFile, env: NodeJS.ProcessEnv = process.env): string {
  const file = ctlSettingsFilePath(env);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(s, null, 2) + "\n", { mode: 0o600 });
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, file);
  return file;
}

/**
 * The session ctl signs in with: LLMGW_SESSION (its gateway is LLMGW_ADMIN_URL's: the file's URL
 * may be another's), else the settings file's `session` with the URL it was made at.
 */
export function ctlSession(env: NodeJS.ProcessEnv = process.env): { token: string; url?: string } | undefined {
  if (env.LLMGW_SESSION) return { token: env.LLMGW_SESSION };
  const file = readCtlSettingsFile(env);
  return file.session ? { token: file.session, url: file.url } : undefined;
}
