// Engine flags a catalog may not pass: those that read or write arbitrary files, fetch, log prompts,
// run code, put a secret on the command line, or that the agent sets itself. Argparse engines
// (vLLM, SGLang, ComfyUI) accept any unambiguous prefix of a long option, "_" for "-" (vLLM's
// parser) and --flag=value, so all of those count as the flag; llama.cpp matches names exactly.

export interface FlagPolicy {
  engine: string;
  /** Refused long (and, for llama.cpp, short) flags, each with why. */
  refused: Readonly<Record<string, string>>;
  argparse: boolean;
  /** Real engine flags that happen to be prefixes of a refused one: given in full they are fine. */
  allowed?: readonly string[];
}

/** Smallest prefix argparse could take for an option (after "--"). */
const MIN_PREFIX = 4;

// Why a flag is refused, one wording for every engine's table.
export const SET_BY_AGENT = "is set by the agent";
export const KEY_IN_ENV = "would put a key on the command line; keys travel in the environment";
export const RUNS_CODE = "runs code that is not the engine's";
export const READS_FILES = "reads a file the agent did not fetch";
export const WRITES_FILES = "writes files outside the agent's control";
export const DOWNLOADS = "downloads from the network";
export const FETCHES = `${DOWNLOADS}; weights come through Fetch`;
export const LOGS_PROMPTS = "logs prompts";
export const LOADS_PICKLE = "can load pickle weights or stream them from elsewhere";

/** The flag an argument names, normalized the way the engine's parser reads it; null for a value. */
function flagOf(arg: string, argparse: boolean): string | null {
  if (!arg.startsWith("-") || arg === "-" || arg === "--" || /^-\d/.test(arg)) return null;
  const eq = arg.indexOf("=");
  const flag = eq < 0 ? arg : arg.slice(0, eq);
  if (!argparse) return flag;
  const dashes = flag.startsWith("--") ? "--" : "-";
  return dashes + flag.slice(dashes.length).replace(/_/g, "-");
}

/** "engine: --flag …why" for the first refused argument, or null. */
export function refusedFlag(args: readonly string[], policy: FlagPolicy): string | null {
  const refused = Object.entries(policy.refused);
  for (const arg of args) {
    const flag = flagOf(arg, policy.argparse);
    if (!flag) continue;
    const exact = policy.refused[flag];
    if (exact !== undefined && Object.hasOwn(policy.refused, flag)) return `${policy.engine}: ${arg} ${exact}`;
    if (!policy.argparse || !flag.startsWith("--") || flag.length - 2 < MIN_PREFIX) continue;
    if (policy.allowed?.includes(flag)) continue;
    const hit = refused.find(([name]) => name.startsWith("--") && name.startsWith(flag));
    if (hit) return `${policy.engine}: ${arg} abbreviates ${hit[0]}, which ${hit[1]}`;
  }
  return null;
}
