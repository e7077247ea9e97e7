// The command lines, environments, health and metrics paths of the engine adapters.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ENGINE_API_KEY_ENV, type LaunchSpec } from "../../agent/engines/adapter.ts";
import { ENGINES } from "../../agent/engines/registry.ts";

const KEY = "sk-engine-secret";
const spec = (o: Partial<LaunchSpec> = {}): LaunchSpec => ({
  host: "10.1.2.3",
  port: 8123,
  model: "chat",
  weights: "/data/weights/sha256/ab/model.gguf",
  contextLength: 8192,
  args: ["--extra", "1"],
  env: { [ENGINE_API_KEY_ENV]: KEY },
  repoRoot: "/repo",
  ...o,
});
const engine = (name: string) => ENGINES[name]!;

test("llama-server: model file, alias, context, metrics; the key in LLAMA_API_KEY", () => {
  const c = engine("llama-server").command(spec());
  assert.equal(c.command, "llama-server");
  assert.deepEqual(c.args, ["--model", "/data/weights/sha256/ab/model.gguf", "--host", "10.1.2.3", "--port", "8123", "--alias", "chat", "--ctx-size", "8192", "--metrics", "--extra", "1"]);
  assert.deepEqual(c.env, { LLAMA_API_KEY: KEY });
  const hub = engine("llama-server").command(spec({ weights: "org/repo-GGUF", contextLength: 0, env: {} }));
  assert.deepEqual(hub.args.slice(0, 2), ["--hf-repo", "org/repo-GGUF"]);
  assert.ok(!hub.args.includes("--ctx-size"));
  assert.deepEqual(hub.env, {});
});

test("vllm: `vllm serve <weights>` with the served name and max length; the key in VLLM_API_KEY", () => {
  const c = engine("vllm").command(spec({ weights: "/w/sets/abc" }));
  assert.equal(c.command, "vllm");
  assert.deepEqual(c.args, ["serve", "/w/sets/abc", "--host", "10.1.2.3", "--port", "8123", "--served-model-name", "chat", "--max-model-len", "8192", "--extra", "1"]);
  assert.deepEqual(c.env, { VLLM_API_KEY: KEY });
  const lora = engine("vllm").command(spec({ weights: "/w/sets/abc", args: ["--enable-lora"] }));
  assert.deepEqual(lora.env, { VLLM_API_KEY: KEY, VLLM_ALLOW_RUNTIME_LORA_UPDATING: "True" }, "adapters can be loaded at run time");
});

test("sglang: launch_server through a launcher that adds the key inside Python", () => {
  const c = engine("sglang").command(spec({ weights: "/w/sets/abc" }));
  assert.equal(c.command, "python3");
  assert.equal(c.args[0], "-c");
  assert.match(c.args[1]!, /runpy\.run_module\("sglang\.launch_server"/);
  assert.match(c.args[1]!, new RegExp(`os\\.environ\\.pop\\("${ENGINE_API_KEY_ENV}"`));
  assert.deepEqual(c.args.slice(2), ["--model-path", "/w/sets/abc", "--host", "10.1.2.3", "--port", "8123", "--served-model-name", "chat", "--context-length", "8192", "--enable-metrics", "--extra", "1"]);
});

test("comfyui: the gate on the replica's port, main.py behind it (the gate adds its loopback port), health at the gate", () => {
  const c = engine("comfyui").command(spec());
  assert.deepEqual(c.args, ["--import", "tsx", "/repo/agent/engines/comfyui-gate.ts", "--port", "8123", "--host", "10.1.2.3", "--", "python3", "ComfyUI/main.py", "--disable-auto-launch", "--extra", "1"]);
  assert.equal(c.env, undefined, "the key reaches the gate in the request's environment as it is");
  assert.equal(engine("comfyui").healthPath, "/health");
  assert.equal(engine("comfyui").metricsPath, null);
});

test("no engine puts the key on its command line", () => {
  for (const [name, a] of Object.entries(ENGINES)) {
    const c = a.command(spec());
    assert.ok(!c.args.some((x) => x.includes(KEY)), `${name} argv holds the key`);
  }
});

test("health and metrics paths", () => {
  for (const name of ["llama-server", "vllm", "sglang"]) {
    assert.equal(engine(name).healthPath, "/health");
    assert.equal(engine(name).metricsPath, "/metrics");
  }
});
