// The command line of the node-llama-cpp engine (agent/engines/llamacpp-node-server.ts), kept apart
// from the server so the agent can check a catalog's flags without loading llama.cpp.
import { KEY_IN_ENV, SET_BY_AGENT, refusedFlag, type FlagPolicy } from "./flags.ts";

/** node:util parseArgs options; the names are llama-server's. */
export const LLAMACPP_NODE_FLAGS = {
  model: { type: "string" },
  host: { type: "string" },
  port: { type: "string" },
  alias: { type: "string" },
  "ctx-size": { type: "string" },
  parallel: { type: "string" },
  threads: { type: "string" },
  metrics: { type: "boolean" },
} as const;

export const LLAMACPP_NODE_POLICY: FlagPolicy = {
  engine: "node-llama-cpp",
  argparse: false,
  refused: {
    "--model": SET_BY_AGENT,
    "--host": SET_BY_AGENT,
    "--port": SET_BY_AGENT,
    "--alias": SET_BY_AGENT,
    "--ctx-size": "is set by the agent from the catalog's context_length",
    "--api-key": KEY_IN_ENV,
  },
};

/** Flags a catalog may give: the rest are set by the agent or unknown to the engine. */
const OPEN = ["--parallel", "--threads", "--metrics"];

/** null when the arguments are fine, otherwise why not. */
export function validateLlamacppNodeArgs(args: readonly string[]): string | null {
  const refused = refusedFlag(args, LLAMACPP_NODE_POLICY);
  if (refused) return refused;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const flag = a.split("=")[0]!;
    if (!OPEN.includes(flag)) return `node-llama-cpp: unknown flag ${a}; known: ${OPEN.join(", ")}`;
    if (flag === "--metrics" || a.includes("=")) continue;
    const v = args[++i];
    if (v === undefined || !/^\d+$/.test(v)) return `node-llama-cpp: ${flag} needs a whole number`;
  }
  return null;
}
