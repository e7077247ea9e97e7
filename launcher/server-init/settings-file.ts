// The one settings file an install writes (KEY=value lines, read by systemd's EnvironmentFile= and
// by every llmgw command through LLMGW_SETTINGS_FILE) and the secrets beside it, each in a file of
// mode 0600 that the settings name by path (<SECRET>_FILE): the settings file itself holds no
// secret, so it can be read, shown and diffed. Everything is checked with config.ts's zod schema
// before anything is written.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { parseEnv } from "node:util";
import { loadConfig, SECRET_FILES } from "../../common/config.ts";
import type { Layout } from "./layout.ts";

export type SecretName = keyof typeof SECRET_FILES;

/** The file name each secret is kept under in the secrets directory. */
export const SECRET_FILE_NAMES: Record<SecretName, string> = {
  LLMGW_CLUSTER_TOKEN: "cluster-token",
  LLMGW_ADMIN_TOKEN: "admin-token",
  DATABASE_URL: "database-url",
  REDIS_URL: "redis-url",
  LLMGW_NOTIFY_SECRET: "notify-secret",
};

export const secretPath = (layout: Layout, name: SecretName): string => path.join(layout.secretsDir, SECRET_FILE_NAMES[name]);

/** A secret an earlier install kept (a token stays the same when init runs again), or null. */
export function keptSecret(layout: Layout, name: SecretName): string | null {
  try {
    return fs.readFileSync(secretPath(layout, name), "utf8").trim() || null;
  } catch {
    return null;
  }
}

export const newToken = (): string => randomBytes(24).toString("base64url");

// What systemd's EnvironmentFile= and Node's parseEnv both read the same way unquoted.
const PLAIN = /^[A-Za-z0-9_./:@,+=*-]*$/;

/** KEY=value lines; a value with other characters is double-quoted (no newline or quote may be in one). */
export function renderSettings(settings: Record<string, string>, header: string): string {
  const lines = [...header.split("\n").map((l) => `# ${l}`.trimEnd()), ""];
  for (const [k, v] of Object.entries(settings)) {
    if (/["\n\\$`]/.test(v)) throw new Error(`${k}: a value with a quote, backslash, $ or newline cannot be written to the settings file`);
    lines.push(`${k}=${PLAIN.test(v) ? v : `"${v}"`}`);
  }
  return lines.join("\n") + "\n";
}

/** Writes a file whole (temp file, rename) with `mode`. */
function writeWhole(file: string, text: string, mode: number): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}`);
  fs.writeFileSync(tmp, text, { mode });
  fs.chmodSync(tmp, mode);
  fs.renameSync(tmp, file);
}

/**
 * The settings as they will be written, secrets replaced by their files' paths, checked with the
 * schema the processes check with. Throws the schema's message (naming the setting) when one is bad.
 */
export function checkSettings(settings: Record<string, string>, secrets: Partial<Record<SecretName, string>>): void {
  // Checked with the secrets' values (the files are not written yet): the same as the processes will see.
  loadConfig({ ...settings, ...secrets });
}

export interface Written {
  settingsFile: string;
  secretFiles: string[];
}

/** Writes the secrets (0600, their directory 0700) and the settings file (0640) naming them. */
export function writeSettings(layout: Layout, settings: Record<string, string>, secrets: Partial<Record<SecretName, string>>, header: string, owner?: { uid: number; gid: number }): Written {
  checkSettings(settings, secrets);
  fs.mkdirSync(layout.etcDir, { recursive: true, mode: 0o755 });
  fs.mkdirSync(layout.secretsDir, { recursive: true, mode: 0o700 });
  fs.chmodSync(layout.secretsDir, 0o700);
  const all: Record<string, string> = { ...settings };
  const secretFiles: string[] = [];
  for (const [name, value] of Object.entries(secrets) as [SecretName, string][]) {
    const file = secretPath(layout, name);
    writeWhole(file, value + "\n", 0o600);
    if (owner) fs.chownSync(file, owner.uid, owner.gid);
    all[SECRET_FILES[name]] = file;
    secretFiles.push(file);
  }
  // The services read the secrets as their own user.
  if (owner) fs.chownSync(layout.secretsDir, owner.uid, owner.gid);
  writeWhole(layout.settingsFile, renderSettings(all, header), 0o640);
  if (owner) fs.chownSync(layout.settingsFile, 0, owner.gid);
  // As the processes will read it: from the file, the secrets from theirs.
  loadConfig(parseSettingsFile(layout.settingsFile));
  return { settingsFile: layout.settingsFile, secretFiles };
}

/** The KEY=value pairs of a settings file, as processes load them (util.parseEnv is process.loadEnvFile's parser). */
export function parseSettingsFile(file: string): Record<string, string> {
  const parsed = parseEnv(fs.readFileSync(file, "utf8"));
  return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => e[1] !== undefined));
}
