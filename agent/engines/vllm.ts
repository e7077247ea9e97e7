// vLLM (`vllm serve <model>`): an OpenAI API, /health, Prometheus /metrics. It reads its key from
// VLLM_API_KEY, so the key never shows in the process list.
import { config } from "../../common/config.ts";
import { contextArgs, keyEnv, readHealthStatus, type EngineAdapter, type HealthReading } from "./adapter.ts";
import { FETCHES, KEY_IN_ENV, LOADS_PICKLE, LOGS_PROMPTS, READS_FILES, RUNS_CODE, SET_BY_AGENT, WRITES_FILES, refusedFlag, type FlagPolicy } from "./flags.ts";

export const VLLM_FLAGS: FlagPolicy = {
  engine: "vllm",
  argparse: true,
  refused: {
    "--model": SET_BY_AGENT, "--port": SET_BY_AGENT, "--host": SET_BY_AGENT, "--uds": SET_BY_AGENT,
    "--served-model-name": SET_BY_AGENT, "--max-model-len": SET_BY_AGENT,
    "--api-key": KEY_IN_ENV, "--hf-token": KEY_IN_ENV,
    "--trust-remote-code": RUNS_CODE, "--middleware": RUNS_CODE, "--tool-parser-plugin": RUNS_CODE,
    "--worker-extension-cls": RUNS_CODE, "--logits-processors": RUNS_CODE, "--reasoning-parser-plugin": RUNS_CODE,
    "--load-format": LOADS_PICKLE,
    "--download-dir": WRITES_FILES,
    "--config": READS_FILES, "--chat-template": READS_FILES, "--allowed-local-media-path": READS_FILES,
    "--ssl-keyfile": READS_FILES, "--ssl-certfile": READS_FILES, "--ssl-ca-certs": READS_FILES,
    "--lora-modules": READS_FILES, "--prompt-adapters": READS_FILES, "--model-loader-extra-config": READS_FILES,
    "--log-config-file": READS_FILES,
    "--tokenizer": FETCHES, "--revision": FETCHES, "--code-revision": FETCHES, "--tokenizer-revision": FETCHES,
    "--speculative-config": FETCHES, "--kv-transfer-config": "sends the cache to other hosts",
    "--otlp-traces-endpoint": "sends request data to another host",
    "--enable-log-requests": LOGS_PROMPTS, "--log-requests": LOGS_PROMPTS,
    "--enable-log-outputs": LOGS_PROMPTS, "--max-log-len": LOGS_PROMPTS,
  },
  allowed: ["--tokenizer-mode"],
};

export const vllm: EngineAdapter = {
  command(s) {
    return {
      command: config().LLMGW_VLLM,
      args: ["serve", s.weights, "--host", s.host, "--port", String(s.port), "--served-model-name", s.model, ...contextArgs("--max-model-len", s.contextLength), ...s.args],
      // With --enable-lora, published adapters are loaded at run time (POST /v1/load_lora_adapter),
      // which vLLM allows only when told so in its environment.
      env: { ...keyEnv(s, "VLLM_API_KEY"), ...(s.args.includes("--enable-lora") ? { VLLM_ALLOW_RUNTIME_LORA_UPDATING: "True" } : {}) },
    };
  },
  validateArgs: (args) => refusedFlag(args, VLLM_FLAGS),
  healthPath: "/health",
  readHealth: readVllmHealth,
  metricsPath: "/metrics",
  // Needs --enable-lora in the catalog's args (the command then allows runtime updates).
  loraAdapters: true,
};

/**
 * vLLM's /health: 200 with an empty body (its HTTP server listens only once the model is loaded, so
 * while loading the port refuses); once the engine core has died, 503 with an empty body (older V0
 * builds: 500 "Internal Server Error") and every request fails until the process is restarted.
 */
export function readVllmHealth(status: number, body: string): HealthReading {
  if (status === 500 || status === 503) return { ready: false, reason: `the engine is dead (health answered ${status})` };
  return readHealthStatus(status, body);
}
