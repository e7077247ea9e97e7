// SGLang (`python -m sglang.launch_server`): an OpenAI API, /health and, with --enable-metrics,
// Prometheus /metrics. SGLang takes its key only as --api-key, so the module is run by a one-line
// launcher that appends the key from the environment inside Python: it never shows in
// /proc/<pid>/cmdline.
import { ENGINE_API_KEY_ENV, contextArgs, python, readHealthStatus, type EngineAdapter, type HealthReading } from "./adapter.ts";
import { FETCHES, KEY_IN_ENV, LOADS_PICKLE, LOGS_PROMPTS, READS_FILES, RUNS_CODE, SET_BY_AGENT, WRITES_FILES, refusedFlag, type FlagPolicy } from "./flags.ts";

export const SGLANG_FLAGS: FlagPolicy = {
  engine: "sglang",
  argparse: true,
  refused: {
    "--model-path": SET_BY_AGENT, "--model": SET_BY_AGENT, "--port": SET_BY_AGENT, "--host": SET_BY_AGENT,
    "--served-model-name": SET_BY_AGENT, "--context-length": SET_BY_AGENT,
    "--api-key": KEY_IN_ENV, "--admin-api-key": KEY_IN_ENV,
    "--trust-remote-code": RUNS_CODE, "--enable-custom-logit-processor": RUNS_CODE,
    "--load-format": LOADS_PICKLE,
    "--download-dir": WRITES_FILES, "--crash-dump-folder": WRITES_FILES, "--file-storage-path": WRITES_FILES,
    "--config": READS_FILES, "--chat-template": READS_FILES, "--completion-template": READS_FILES,
    "--ssl-keyfile": READS_FILES, "--ssl-certfile": READS_FILES, "--lora-paths": READS_FILES, "--decrypted-config-file": READS_FILES,
    "--tokenizer-path": FETCHES, "--revision": FETCHES, "--speculative-draft-model-path": FETCHES,
    "--dist-init-addr": "joins processes on other hosts",
    "--log-requests": LOGS_PROMPTS, "--log-requests-level": LOGS_PROMPTS,
  },
  allowed: ["--tokenizer-mode", "--tokenizer-worker-num"],
};

/** Runs sglang.launch_server as `-m` would, with the key from the environment appended to its argv. */
const LAUNCHER = [
  "import os, runpy, sys",
  `k = os.environ.pop(${JSON.stringify(ENGINE_API_KEY_ENV)}, "")`,
  'sys.argv = ["sglang.launch_server", *sys.argv[1:], *(["--api-key", k] if k else [])]',
  'runpy.run_module("sglang.launch_server", run_name="__main__", alter_sys=True)',
].join("; ");

export const sglang: EngineAdapter = {
  command(s) {
    return {
      command: python(),
      args: ["-c", LAUNCHER, "--model-path", s.weights, "--host", s.host, "--port", String(s.port), "--served-model-name", s.model, ...contextArgs("--context-length", s.contextLength), "--enable-metrics", ...s.args],
    };
  },
  validateArgs: (args) => refusedFlag(args, SGLANG_FLAGS),
  healthPath: "/health",
  readHealth: readSglangHealth,
  metricsPath: "/metrics",
};

/**
 * SGLang's /health (its /health_generate, the same check, always runs one token): 200 with an empty
 * body when serving; 503 with an empty body while the server is still starting (warming up), while
 * it shuts down, or when its one-token check found the scheduler stuck — the status says no more.
 */
export function readSglangHealth(status: number, body: string): HealthReading {
  if (status === 503) return { ready: false, reason: "starting, stopping, or failing its one-token check (health answered 503)" };
  return readHealthStatus(status, body);
}
