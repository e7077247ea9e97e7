// The five settings `llmgw ctl` reads (where the admin API is, its token, the data directory whose
// files name them), checked by hand. Not through config(): zod's import alone was over a third of
// a ctl command's CPU (docs/benchmarks.md, "ctl's start"). common/config.ts's schema takes its
// defaults from here, and tests/unit/ctl-settings.test.ts checks that both accept, default and
// reject the same values with the same messages.
import path from "node:path";
import { secretFromFile } from "./settings-file.ts";

/** The defaults of the settings below that have one (common/config.ts's schema uses them too). */
export const CTL_DEFAULTS = { LLMGW_DATA_DIR: ".data", LLMGW_ADMIN_HOST: "127.0.0.1", LLMGW_ADMIN_PORT: 8081 } as const;

export interface CtlSettings {
  dataDir: string;
  LLMGW_ADMIN_URL?: string;
  LLMGW_ADMIN_TOKEN?: string;
  LLMGW_ADMIN_HOST: string;
  LLMGW_ADMIN_PORT: number;
}

/**
 * A port as config.ts's `z.coerce.number().int().min(0).max(65535)` takes it: Number() of the text
 * (so "" is 0 and "0x50" is 80, as there), and the problems zod would name, in its words.
 */
function portProblems(text: string): { port: number; problems: string[] } {
  const n = Number(text);
  if (!Number.isFinite(n)) return { port: n, problems: [`Invalid input: expected number, received ${n}`] };
  if (!Number.isInteger(n)) return { port: n, problems: ["Invalid input: expected int, received number"] };
  const problems: string[] = [];
  if (n > Number.MAX_SAFE_INTEGER) problems.push(`Too big: expected int to be <=${Number.MAX_SAFE_INTEGER}`);
  if (n < Number.MIN_SAFE_INTEGER) problems.push(`Too small: expected int to be >=${Number.MIN_SAFE_INTEGER}`);
  if (n < 0) problems.push("Too small: expected number to be >=0");
  if (n > 65535) problems.push("Too big: expected number to be <=65535");
  return { port: n, problems };
}

/** ctl's settings from env; a bad value throws config()'s error ("invalid configuration: …"). */
export function ctlSettings(env: NodeJS.ProcessEnv = process.env): CtlSettings {
  const admin = env.LLMGW_ADMIN_PORT;
  const { port, problems } = admin === undefined ? { port: CTL_DEFAULTS.LLMGW_ADMIN_PORT, problems: [] } : portProblems(admin);
  if (problems.length) throw new Error(`invalid configuration:\n${problems.map((p) => `  LLMGW_ADMIN_PORT: ${p}`).join("\n")}`);
  return {
    dataDir: path.resolve(env.LLMGW_DATA_DIR ?? CTL_DEFAULTS.LLMGW_DATA_DIR),
    LLMGW_ADMIN_URL: env.LLMGW_ADMIN_URL,
    // An installed machine keeps it in a file of its own (LLMGW_ADMIN_TOKEN_FILE, llmgw server init).
    LLMGW_ADMIN_TOKEN: secretFromFile(env, "LLMGW_ADMIN_TOKEN"),
    LLMGW_ADMIN_HOST: env.LLMGW_ADMIN_HOST ?? CTL_DEFAULTS.LLMGW_ADMIN_HOST,
    LLMGW_ADMIN_PORT: port,
  };
}
