// The whisper-server engine's adapter (whisper.cpp's server): its command line from the catalog,
// with OpenAI's transcription route as its inference path, and the flags it refuses.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ENGINE_API_KEY_ENV, type LaunchSpec } from "../../agent/engines/adapter.ts";
import { ENGINES } from "../../agent/engines/registry.ts";
import { ENGINES as CATALOG_ENGINES } from "../../common/catalog.ts";

const spec: LaunchSpec = {
  host: "10.1.2.3",
  port: 18002,
  model: "whisper-small",
  weights: "/var/lib/llmgw/weights/ggml-small.bin",
  contextLength: 0,
  args: ["--threads", "2"],
  env: { [ENGINE_API_KEY_ENV]: "sk-engine" },
  repoRoot: "/srv/llmgw",
};

test("the catalog and the agent both know whisper-server", () => {
  assert.ok((CATALOG_ENGINES as readonly string[]).includes("whisper-server"));
  assert.ok(ENGINES["whisper-server"]);
});

test("the command line loads the catalog's file and serves OpenAI's transcription route", () => {
  const c = ENGINES["whisper-server"]!.command(spec);
  assert.equal(c.command, "whisper-server");
  assert.deepEqual(c.args, ["--model", "/var/lib/llmgw/weights/ggml-small.bin", "--host", "10.1.2.3", "--port", "18002", "--inference-path", "/v1/audio/transcriptions", "--threads", "2"]);
  assert.equal(ENGINES["whisper-server"]!.healthPath, "/health");
  assert.equal(ENGINES["whisper-server"]!.metricsPath, null);
});

test("refuses flags the agent sets and flags that read or write files", () => {
  const v = ENGINES["whisper-server"]!.validateArgs;
  assert.equal(v(["--threads", "4", "--language", "en"]), null);
  assert.match(v(["--inference-path", "/x"])!, /set by the agent/);
  assert.match(v(["--model", "/etc/passwd"])!, /set by the agent/);
  assert.match(v(["--convert"])!, /ffmpeg/);
  assert.match(v(["--public", "/srv"])!, /serves files/);
});
