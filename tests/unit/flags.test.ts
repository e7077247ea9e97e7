// Refused engine flags, one table per engine: exact names, argparse prefixes of 4+ characters,
// "_" spellings and --flag=value count as the flag; harmless flags pass.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ENGINES } from "../../agent/engines/registry.ts";
import { DOWNLOADS, FETCHES, KEY_IN_ENV, LOADS_PICKLE, LOGS_PROMPTS, READS_FILES, RUNS_CODE, SET_BY_AGENT, WRITES_FILES } from "../../agent/engines/flags.ts";

type Row = [args: string[], refused: RegExp | null];

const TABLES: Record<string, Row[]> = {
  "llama-server": [
    [["--log-file", "/tmp/x"], /--log-file writes files/],
    [["--slot-save-path", "/tmp"], /writes files/],
    [["--log-file=/tmp/x"], /--log-file=\/tmp\/x writes files/],
    [["-hf", "org/m"], /downloads/],
    [["--api-key", "k"], /keys travel in the environment/],
    [["--port", "1"], /set by the agent/],
    [["-v"], /logs prompts/],
    [["--n-gpu-layers", "99", "--flash-attn", "on", "-np", "4"], null],
    // Not argparse: a prefix is a different (unknown) flag, not the refused one.
    [["--log-fi", "x"], null],
  ],
  vllm: [
    [["--trust-remote-code"], /runs code/],
    [["--trust_remote_code"], /runs code/],
    [["--trust-rem"], /abbreviates --trust-remote-code/],
    [["--trus"], /abbreviates --trust-remote-code/],
    [["--download-dir", "/x"], /writes files/],
    [["--download_dir=/x"], /writes files/],
    [["--enable-log-requests"], /logs prompts/],
    [["--enable-log-req"], /abbreviates --enable-log-requests/],
    [["--load-format=pt"], /pickle/],
    [["--api-key=k"], /keys travel/],
    [["--served-model", "x"], /abbreviates --served-model-name, which is set by the agent/],
    [["--tokenizer-mode", "auto", "--tensor-parallel-size", "2", "--gpu-memory-utilization=0.9", "--tru"], null],
  ],
  sglang: [
    [["--trust-remote-code"], /runs code/],
    [["--load-format", "pt"], /pickle/],
    [["--load_form=pt"], /abbreviates --load-format/],
    [["--download-dir", "/x"], /writes files/],
    [["--log-requests"], /logs prompts/],
    [["--tokenizer-path", "org/x"], /downloads/],
    [["--tokenizer-mode", "auto", "--tp-size", "2", "--mem-fraction-static", "0.8"], null],
  ],
  comfyui: [
    [["--listen"], /beyond loopback/],
    [["--list", "0.0.0.0"], /abbreviates --listen/],
    [["--listen=0.0.0.0"], /beyond loopback/],
    [["--enable-manager"], /run code/],
    [["--enable_manager"], /run code/],
    [["--output-directory", "/"], /writes files/],
    [["--lowvram", "--preview-method", "auto"], null],
  ],
};

for (const [engine, rows] of Object.entries(TABLES)) {
  test(`${engine}: refused flags`, () => {
    for (const [args, refused] of rows) {
      const got = ENGINES[engine]!.validateArgs(args);
      if (refused === null) assert.equal(got, null, `${args.join(" ")} should pass, got: ${got}`);
      else {
        assert.ok(got, `${args.join(" ")} should be refused`);
        assert.match(got, refused);
        assert.ok(got.startsWith(`${engine}: `));
      }
    }
  });
}

test("each reason has one wording across the engines (agent/engines/flags.ts)", () => {
  const reason = (engine: string, flag: string): string => {
    const got = ENGINES[engine]!.validateArgs([flag, "x"]);
    assert.ok(got?.startsWith(`${engine}: ${flag} `), `${engine} ${flag}: ${got}`);
    return got!.slice(`${engine}: ${flag} `.length);
  };
  const rows: [engine: string, flag: string, why: string][] = [
    ["vllm", "--port", SET_BY_AGENT], ["sglang", "--port", SET_BY_AGENT], ["llama-server", "--port", SET_BY_AGENT],
    ["comfyui", "--port", SET_BY_AGENT], ["node-llama-cpp", "--port", SET_BY_AGENT],
    ["vllm", "--api-key", KEY_IN_ENV], ["sglang", "--api-key", KEY_IN_ENV], ["llama-server", "--api-key", KEY_IN_ENV], ["node-llama-cpp", "--api-key", KEY_IN_ENV],
    ["vllm", "--trust-remote-code", RUNS_CODE], ["sglang", "--trust-remote-code", RUNS_CODE],
    ["vllm", "--load-format", LOADS_PICKLE], ["sglang", "--load-format", LOADS_PICKLE],
    ["vllm", "--download-dir", WRITES_FILES], ["sglang", "--download-dir", WRITES_FILES], ["llama-server", "--log-file", WRITES_FILES], ["comfyui", "--output-directory", WRITES_FILES],
    ["vllm", "--chat-template", READS_FILES], ["sglang", "--chat-template", READS_FILES], ["llama-server", "--chat-template-file", READS_FILES], ["comfyui", "--input-directory", READS_FILES],
    ["vllm", "--tokenizer", FETCHES], ["sglang", "--tokenizer-path", FETCHES], ["llama-server", "--hf-repo", FETCHES], ["comfyui", "--front-end-version", DOWNLOADS],
    ["vllm", "--enable-log-requests", LOGS_PROMPTS], ["sglang", "--log-requests", LOGS_PROMPTS], ["llama-server", "--verbose", LOGS_PROMPTS],
  ];
  for (const [engine, flag, why] of rows) assert.equal(reason(engine, flag), why, `${engine} ${flag}`);
});
