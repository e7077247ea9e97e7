// The agent's adapter for the node-llama-cpp engine (agent/engines/llamacpp-node-server.ts):
// llama.cpp on the CPU with llama-server's HTTP API, health and metrics, for machines without a
// GPU engine and for tests. It loads one GGUF file that Fetch produced (or a catalog `path:`).
import { moduleArgs } from "../../common/code-paths.ts";
import { contextArgs, keyEnv, type EngineAdapter } from "./adapter.ts";
import { validateLlamacppNodeArgs } from "./llamacpp-node-flags.ts";

export const llamacppNode: EngineAdapter = {
  command(s) {
    return {
      command: process.execPath,
      args: [
        ...moduleArgs(s.repoRoot, "agent/engines/llamacpp-node-server.ts"),
        "--model",
        s.weights,
        "--host",
        s.host,
        "--port",
        String(s.port),
        "--alias",
        s.model,
        ...contextArgs("--ctx-size", s.contextLength),
        "--metrics",
        ...s.args.filter((a) => a !== "--metrics"),
      ],
      env: keyEnv(s, "LLAMA_API_KEY"),
    };
  },
  validateArgs: validateLlamacppNodeArgs,
  healthPath: "/health",
  metricsPath: "/metrics",
};
