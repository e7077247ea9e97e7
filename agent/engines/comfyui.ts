// ComfyUI (`python main.py` in its install directory, LLMGW_COMFYUI_DIR) has no keys of its own, so
// the agent starts the gate (agent/engines/comfyui-gate.ts) on the replica's port, and the gate
// starts ComfyUI as its child on loopback and lets through only requests with the replica's key
// (LLMGW_ENGINE_API_KEY in the environment). Health is the gate's /health (ComfyUI's /system_stats
// answering); it serves no Prometheus metrics. Its models are found through its own model folders,
// so the weights path is not on the command line.
import path from "node:path";
import { moduleArgs } from "../../common/code-paths.ts";
import { config } from "../../common/config.ts";
import { python, type EngineAdapter, type LaunchSpec } from "./adapter.ts";
import { DOWNLOADS, READS_FILES, SET_BY_AGENT, WRITES_FILES, refusedFlag, type FlagPolicy } from "./flags.ts";

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
    "--front-end-version": DOWNLOADS, "--comfy-api-base": DOWNLOADS,
  },
};

/** A catalog argument that runs the stand-in (agent/engines/comfyui-standin.ts) instead of ComfyUI. */
export const STANDIN_ARG = "--llmgw-standin";

/** The stand-in where ComfyUI cannot run: LLMGW_COMFYUI_STANDIN=1 on the agent, or the catalog asks. */
function useStandin(args: readonly string[]): boolean {
  return config().LLMGW_COMFYUI_STANDIN === "1" || args.includes(STANDIN_ARG);
}

/** What the gate runs behind it; the gate adds --listen 127.0.0.1 --port <its loopback port>. */
function engineCommand(s: LaunchSpec): string[] {
  if (useStandin(s.args)) return [process.execPath, ...moduleArgs(s.repoRoot, "agent/engines/comfyui-standin.ts"), ...s.args.filter((a) => a !== STANDIN_ARG)];
  const dir = config().LLMGW_COMFYUI_DIR;
  return [python(), path.join(dir, "main.py"), "--disable-auto-launch", ...s.args];
}

export const comfyui: EngineAdapter = {
  command(s) {
    return {
      command: process.execPath,
      args: [...moduleArgs(s.repoRoot, "agent/engines/comfyui-gate.ts"), "--port", String(s.port), "--host", s.host, "--", ...engineCommand(s)],
    };
  },
  validateArgs: (args) => refusedFlag(args, COMFYUI_FLAGS),
  healthPath: "/health",
  metricsPath: null,
};
