// The node-llama-cpp engine's adapter: its command line from the catalog, and the flags it refuses.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ENGINE_API_KEY_ENV, type LaunchSpec } from "../../agent/engines/adapter.ts";
import { ENGINES } from "../../agent/engines/registry.ts";
import { settingsFromArgs } from "../../agent/engines/llamacpp-node-server.ts";
import { ENGINES as CATALOG_ENGINES } from "../../common/catalog.ts";

const spec = (over: Partial<LaunchSpec> = {}): LaunchSpec => ({
  host: "10.1.2.3",
  port: 18001,
  model: "tiny",
  weights: "/var/lib/llmgw/weights/tiny.gguf",
  contextLength: 256,
  args: ["--threads", "1"],
  env: { [ENGINE_API_KEY_ENV]: "sk-engine" },
  repoRoot: "/srv/llmgw",
  ...over,
});

test("the catalog and the agent both know node-llama-cpp", () => {
  assert.ok((CATALOG_ENGINES as readonly string[]).includes("node-llama-cpp"));
  assert.ok(ENGINES["node-llama-cpp"]);
});

test("the command line loads the catalog's file under the served name, with metrics, key in LLAMA_API_KEY", () => {
  const c = ENGINES["node-llama-cpp"]!.command(spec());
  assert.equal(c.command, process.execPath);
  assert.deepEqual(c.args, [
    "--import", "tsx", "/srv/llmgw/agent/engines/llamacpp-node-server.ts",
    "--model", "/var/lib/llmgw/weights/tiny.gguf", "--host", "10.1.2.3", "--port", "18001", "--alias", "tiny",
    "--ctx-size", "256", "--metrics", "--threads", "1",
  ]);
  assert.deepEqual(c.env, { LLAMA_API_KEY: "sk-engine" });
  assert.ok(!ENGINES["node-llama-cpp"]!.command(spec({ contextLength: 0 })).args.includes("--ctx-size"));
});

test("the server reads the command line the adapter writes", () => {
  const c = ENGINES["node-llama-cpp"]!.command(spec());
  const s = settingsFromArgs(c.args.slice(3), { LLAMA_API_KEY: "k" });
  assert.deepEqual(s, { model: "/var/lib/llmgw/weights/tiny.gguf", host: "10.1.2.3", port: 18001, alias: "tiny", ctxSize: 256, parallel: 1, threads: 1, metrics: true, apiKey: "k" });
  assert.throws(() => settingsFromArgs(["--port", "1", "--mmproj", "x"]), /mmproj/);
});

test("refuses flags the agent sets, keys on the command line, and flags the engine does not know", () => {
  const v = ENGINES["node-llama-cpp"]!.validateArgs;
  assert.equal(v(["--parallel", "4", "--threads", "2", "--metrics"]), null);
  assert.equal(v(["--parallel=4"]), null);
  assert.match(v(["--model", "/etc/passwd"])!, /^node-llama-cpp: --model is set by the agent/);
  assert.match(v(["--ctx-size", "99999"])!, /context_length/);
  assert.match(v(["--api-key", "x"])!, /key on the command line/);
  assert.match(v(["--lora", "/tmp/x"])!, /unknown flag --lora/);
  assert.match(v(["--parallel", "many"])!, /whole number/);
  assert.match(v(["--threads"])!, /whole number/);
});
