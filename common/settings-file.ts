// The installed machine's settings file and the secrets kept in files of their own (llmgw server
// init writes both). No zod here: ctl loads this at its start (common/ctl-settings.ts says why).
import fs from "node:fs";

/** The secrets a file may hold instead of the environment: the setting, and the one naming its file. */
export const SECRET_FILES = {
  LLMGW_CLUSTER_TOKEN: "LLMGW_CLUSTER_TOKEN_FILE",
  LLMGW_ADMIN_TOKEN: "LLMGW_ADMIN_TOKEN_FILE",
  DATABASE_URL: "DATABASE_URL_FILE",
  REDIS_URL: "REDIS_URL_FILE",
  LLMGW_NOTIFY_SECRET: "LLMGW_NOTIFY_SECRET_FILE",
} as const;

/** `env` with each secret read from its <SECRET>_FILE where the secret itself is not set. */
export function withSecretFiles(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const name of Object.keys(SECRET_FILES) as (keyof typeof SECRET_FILES)[]) {
    const value = secretFromFile(env, name);
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** One secret: the setting itself, else its <SECRET>_FILE's content, else undefined. */
export function secretFromFile(env: NodeJS.ProcessEnv, name: keyof typeof SECRET_FILES): string | undefined {
  const fileVar = SECRET_FILES[name];
  const file = env[fileVar];
  if (env[name] || !file) return env[name];
  try {
    return fs.readFileSync(file, "utf8").trim();
  } catch (err) {
    // The path only: never the content.
    throw new Error(`invalid configuration:\n  ${fileVar}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

function readable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/** The installed settings file: LLMGW_SETTINGS_FILE, else /etc/llmgw/llmgw.env where it exists. */
export const DEFAULT_SETTINGS_FILE = "/etc/llmgw/llmgw.env";

/**
 * Loads the settings file into process.env (what the environment already sets wins, as with
 * systemd's Environment= over EnvironmentFile=). Returns the file read, or null.
 */
export function loadSettingsFile(env: NodeJS.ProcessEnv = process.env): string | null {
  // The default only where this user may read it (0640 root:llmgw): anyone else runs without it.
  const file = env.LLMGW_SETTINGS_FILE || (readable(DEFAULT_SETTINGS_FILE) ? DEFAULT_SETTINGS_FILE : null);
  if (!file) return null;
  try {
    process.loadEnvFile(file);
  } catch (err) {
    throw new Error(`LLMGW_SETTINGS_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  return file;
}
