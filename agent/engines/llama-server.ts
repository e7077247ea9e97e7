// llama.cpp's `llama-server`: one GGUF file (or a hub repo it fetches itself), an OpenAI API,
// /health and, with --metrics, Prometheus /metrics. It reads its key from LLAMA_API_KEY.
import { config } from "../../common/config.ts";
import { contextArgs, errorMessage, keyEnv, parseJson, readHealthStatus, type EngineAdapter, type HealthReading } from "./adapter.ts";
import { FETCHES, KEY_IN_ENV, LOGS_PROMPTS, READS_FILES, SET_BY_AGENT, WRITES_FILES, refusedFlag, type FlagPolicy } from "./flags.ts";

/** llama.cpp's parser takes names exactly, so every alias is listed. */
export const LLAMA_SERVER_FLAGS: FlagPolicy = {
  engine: "llama-server",
  argparse: false,
  refused: {
    "-m": SET_BY_AGENT, "--model": SET_BY_AGENT,
    "--port": SET_BY_AGENT, "--host": SET_BY_AGENT,
    "-a": SET_BY_AGENT, "--alias": SET_BY_AGENT,
    "-c": SET_BY_AGENT, "--ctx-size": SET_BY_AGENT,
    "--api-key": KEY_IN_ENV, "--api-key-file": READS_FILES,
    "--log-file": WRITES_FILES, "--slot-save-path": WRITES_FILES,
    "-lcd": WRITES_FILES, "--lookup-cache-dynamic": WRITES_FILES,
    "-lcs": READS_FILES, "--lookup-cache-static": READS_FILES,
    "--path": "serves files from a directory",
    "--ssl-key-file": READS_FILES, "--ssl-cert-file": READS_FILES,
    "--chat-template-file": READS_FILES, "--grammar-file": READS_FILES, "-jf": READS_FILES, "--json-schema-file": READS_FILES,
    "--lora": READS_FILES, "--lora-scaled": READS_FILES, "--control-vector": READS_FILES, "--control-vector-scaled": READS_FILES,
    "-mm": READS_FILES, "--mmproj": READS_FILES, "-md": READS_FILES, "--model-draft": READS_FILES,
    "--prompt-cache": WRITES_FILES, "-f": READS_FILES, "--file": READS_FILES, "-bf": READS_FILES, "--binary-file": READS_FILES,
    "-mu": FETCHES, "--model-url": FETCHES, "-mmu": FETCHES, "--mmproj-url": FETCHES,
    "-hf": FETCHES, "-hfr": FETCHES, "--hf-repo": FETCHES, "-hff": FETCHES, "--hf-file": FETCHES,
    "-hfd": FETCHES, "-hfrd": FETCHES, "--hf-repo-draft": FETCHES, "-hfv": FETCHES, "-hfrv": FETCHES, "--hf-repo-v": FETCHES, "-hffv": FETCHES, "--hf-file-v": FETCHES,
    "-hft": KEY_IN_ENV, "--hf-token": KEY_IN_ENV,
    "--rpc": "sends work to other hosts",
    "-v": LOGS_PROMPTS, "--verbose": LOGS_PROMPTS, "--log-verbose": LOGS_PROMPTS, "--verbose-prompt": LOGS_PROMPTS,
    "-lv": LOGS_PROMPTS, "--verbosity": LOGS_PROMPTS, "--log-verbosity": LOGS_PROMPTS,
    "--slots": "exposes the prompts being served",
    "--props": "lets callers change server settings",
  },
};

export const llamaServer: EngineAdapter = {
  command(s) {
    // A hub id (org/name…) is left for llama-server to fetch; anything else is a file Fetch produced.
    const load = s.weights.startsWith("/") ? ["--model", s.weights] : ["--hf-repo", s.weights];
    return {
      command: config().LLMGW_LLAMA_SERVER,
      args: [...load, "--host", s.host, "--port", String(s.port), "--alias", s.model, ...contextArgs("--ctx-size", s.contextLength), "--metrics", ...s.args],
      env: keyEnv(s, "LLAMA_API_KEY"),
    };
  },
  validateArgs: (args) => refusedFlag(args, LLAMA_SERVER_FLAGS),
  healthPath: "/health",
  readHealth: readLlamaServerHealth,
  metricsPath: "/metrics",
};

/**
 * llama-server's /health. Current builds: 200 {"status":"ok"} once the model is loaded, 503 with an
 * OpenAI error body ("Loading model", type unavailable_error) before. Older builds: 503 {"status":
 * "loading model"}, 500 {"status":"error"} when the model failed to load, and {"status":"no slot
 * available"} when every slot is busy — a loaded model, so ready, with the reason said.
 */
export function readLlamaServerHealth(status: number, body: string): HealthReading {
  const json = parseJson(body);
  const said = json !== null && typeof json === "object" ? (json as { status?: unknown }).status : undefined;
  if (said === "ok" && status === 200) return { ready: true };
  if (said === "no slot available") return { ready: true, reason: "all slots busy" };
  if (said === "loading model") return { ready: false, reason: "loading model" };
  if (said === "error") return { ready: false, reason: "the model failed to load" };
  const message = errorMessage(json);
  if (status === 503 && message) return { ready: false, reason: message.toLowerCase() };
  return readHealthStatus(status, body);
}
