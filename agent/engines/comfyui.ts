// ComfyUI (`python main.py` in its install directory, LLMGW_COMFYUI_DIR): it has no keys of its
// own, so it listens on loopback only, for a key-checking gate to sit in front (a later piece).
// Health is /system_stats; it serves no Prometheus metrics. Its models are found through its own
// model folders, so the weights path is not on the command line.
import path from "node:path";
import { python, type EngineAdapter } from "./adapter.ts";
import { SET_BY_AGENT, refusedFlag, type FlagPolicy } from "./flags.ts";

const READS_FILES = "reads a file the agent did not fetch";
const WRITES_FILES = "writes files outside the agent's control";
const FETCHES = "downloads from the network";

export const COMFYUI_FLAGS: FlagPolicy = {
  engine: "comfyui",
  argparse: true,
  refused: {
    "--port": SET_BY_AGENT,
    "--listen": "would expose ComfyUI, which checks no keys, beyond loopback",
    "--enable-manager": "installs custom nodes, which run code", "--enable-manager-legacy-ui": "installs custom nodes, which run code",
    "--enable-cors-header": "lets any web page call ComfyUI",
    "--base-directory": WRITES_FILES, "--output-directory": WRITES_FILES, "--temp-directory": WRITES_FILES,
    "--input-directory": READS_FILES, "--user-directory": WRITES_FILES, "--database-url": WRITES_FILES,
    "--extra-model-paths-config": READS_FILES, "--front-end-root": READS_FILES,
    "--tls-keyfile": READS_FILES, "--tls-certfile": READS_FILES,
    "--front-end-version": FETCHES, "--comfy-api-base": FETCHES,
  },
};

/** A catalog argument that runs the stand-in (agent/engines/comfyui-standin.ts) instead of ComfyUI. */
export const STANDIN_ARG = "--llmgw-standin";

/** The stand-in where ComfyUI cannot run: LLMGW_COMFYUI_STANDIN=1 on the agent, or the catalog asks. */
function useStandin(args: readonly string[]): boolean {
  return process.env.LLMGW_COMFYUI_STANDIN === "1" || args.includes(STANDIN_ARG);
}

export const comfyui: EngineAdapter = {
  command(s) {
    if (useStandin(s.args)) {
      return {
        command: process.execPath,
        args: ["--import", "tsx", path.join(s.repoRoot, "agent", "engines", "comfyui-standin.ts"), "--listen", "127.0.0.1", "--port", String(s.port), ...s.args.filter((a) => a !== STANDIN_ARG)],
      };
    }
    const dir = process.env.LLMGW_COMFYUI_DIR || "ComfyUI";
    return {
      command: python(),
      args: [path.join(dir, "main.py"), "--listen", "127.0.0.1", "--port", String(s.port), "--disable-auto-launch", ...s.args],
    };
  },
  validateArgs: (args) => refusedFlag(args, COMFYUI_FLAGS),
  healthPath: "/system_stats",
  metricsPath: null,
};
