// The agent's adapter for the `sim` engine (agent/engines/sim/, run by sim/main.ts): the command that
// starts one replica, and a check of the extra flags a profile may give it.
import { moduleArgs } from "../../common/code-paths.ts";
import { ENGINE_API_KEY_ENV, type EngineAdapter } from "./adapter.ts";
import { SIM_FLAGS, checkSettings, parseSimFlags } from "./sim/settings.ts";

export const SIM_HEALTH_PATH = "/health";

/** Flags the agent sets itself; a profile may not. */
const AGENT_FLAGS = new Set(["--port", "--model", "--host", "--api-key-env"]);

/**
 * The command line of one sim replica. The child must be started with `repoRoot` as its working
 * directory, so that `--import tsx` resolves. Its key travels in the environment: the command line
 * names only the variable (ENGINE_API_KEY_ENV), which the agent always sets.
 */
export function simCommand(opts: { host: string; port: number; model: string; args: string[]; repoRoot: string; weights?: string }): {
  command: string;
  args: string[];
  env: Record<string, string>;
} {
  return {
    command: process.execPath,
    args: [
      ...moduleArgs(opts.repoRoot, "agent/engines/sim/main.ts"),
      "--host",
      opts.host,
      "--port",
      String(opts.port),
      "--model",
      opts.model,
      ...opts.args,
      "--api-key-env",
      ENGINE_API_KEY_ENV,
    ],
    // The sim loads nothing, but is given its weights as a real engine is (what Fetch returned).
    env: opts.weights ? { LLMGW_WEIGHTS: opts.weights } : {},
  };
}

/** An error message for flags the sim does not know (or the agent sets itself), or null. */
export function validateSimArgs(args: string[]): string | null {
  for (const a of args) {
    if (!a.startsWith("--")) continue;
    const flag = a.includes("=") ? a.slice(0, a.indexOf("=")) : a;
    if (AGENT_FLAGS.has(flag)) return `sim: ${flag} is set by the agent; leave it out of the engine arguments`;
    if (!(flag in SIM_FLAGS))
      return `sim: unknown flag ${flag}; known: ${Object.keys(SIM_FLAGS)
        .filter((f) => !AGENT_FLAGS.has(f))
        .join(", ")}`;
  }
  try {
    checkSettings({ ...parseSimFlags(args), port: 0, model: "m" });
  } catch (e) {
    return `sim: ${(e as Error).message}`;
  }
  return null;
}

export const simAdapter: EngineAdapter = { command: simCommand, validateArgs: validateSimArgs, healthPath: SIM_HEALTH_PATH, metricsPath: "/metrics", loraAdapters: true };
