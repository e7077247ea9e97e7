// whisper.cpp's server (`whisper-server`, built from whisper.cpp's source with cmake): one ggml
// Whisper model, speech to text over a multipart POST. Its own route is /inference; it is started
// with --inference-path set to OpenAI's route, so the gateway sends every engine the same request
// (gateway/client-api/audio.ts), and its answer (`{"text"}`, text, srt, vtt, verbose_json) is
// put in OpenAI's shape there. It demands no key of callers: its replica must listen on a
// private interface (LLMGW_ENGINE_HOST). /health answers 200 once the model is loaded.
import { config } from "../../common/config.ts";
import { readHealthStatus, type EngineAdapter } from "./adapter.ts";
import { FETCHES, READS_FILES, SET_BY_AGENT, WRITES_FILES, refusedFlag, type FlagPolicy } from "./flags.ts";

/** The route the gateway sends transcriptions to, on every engine. */
export const TRANSCRIPTION_PATH = "/v1/audio/transcriptions";

export const WHISPER_SERVER_FLAGS: FlagPolicy = {
  engine: "whisper-server",
  argparse: false,
  refused: {
    "-m": SET_BY_AGENT, "--model": SET_BY_AGENT,
    "--host": SET_BY_AGENT, "--port": SET_BY_AGENT,
    "--inference-path": SET_BY_AGENT,
    "--public": "serves files from a directory", "--request-path": SET_BY_AGENT,
    "-dtw": READS_FILES, "--dtw": READS_FILES,
    "-oved": READS_FILES, "--ov-e-device": READS_FILES,
    "--convert": "runs ffmpeg on what callers send",
    "-of": WRITES_FILES, "--output-file": WRITES_FILES,
    "-vm": READS_FILES, "--vad-model": READS_FILES,
    "-hf": FETCHES,
  },
};

export const whisperServer: EngineAdapter = {
  command(s) {
    return {
      command: config().LLMGW_WHISPER_SERVER,
      args: ["--model", s.weights, "--host", s.host, "--port", String(s.port), "--inference-path", TRANSCRIPTION_PATH, ...s.args],
    };
  },
  validateArgs: (args) => refusedFlag(args, WHISPER_SERVER_FLAGS),
  healthPath: "/health",
  readHealth: readHealthStatus,
  metricsPath: null,
};
