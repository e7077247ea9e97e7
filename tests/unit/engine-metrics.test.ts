// The load each engine reports, read from /metrics samples under its own names
// (tests/fixtures/metrics): what the router scores replicas by and what a drain waits on.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { parseEngineLoad, type EngineLoad } from "../../gateway/router/engine-metrics.ts";

const FIXTURES = path.join(import.meta.dirname, "..", "fixtures", "metrics");
const sample = (file: string) => fs.readFileSync(path.join(FIXTURES, file), "utf8");

const EXPECTED: Record<string, EngineLoad> = {
  "vllm.txt": { running: 3, waiting: 2, kvCacheUsage: 0.41 },
  "vllm-0.6.txt": { running: 1, waiting: 0, kvCacheUsage: 0.0731 },
  "sglang.txt": { running: 4, waiting: 1, kvCacheUsage: 0.28 },
  "llama-server.txt": { running: 2, waiting: 1, kvCacheUsage: 0.125 },
};

for (const [file, load] of Object.entries(EXPECTED)) {
  test(`reads running, waiting and KV cache use from ${file}`, () => {
    assert.deepEqual(parseEngineLoad(sample(file)), load);
  });
}

test("an exposition without any engine's load series is unreadable, not idle", () => {
  assert.equal(parseEngineLoad("# HELP python_gc_objects_collected_total x\npython_gc_objects_collected_total 3\n"), null);
  assert.equal(parseEngineLoad(""), null);
});

test("series for several models or engines are summed; KV cache takes the fullest", () => {
  const two = sample("sglang.txt") + sample("sglang.txt").replaceAll("meta-llama/Llama-3.1-8B-Instruct", "other").replace(" 0.28", " 0.5");
  assert.deepEqual(parseEngineLoad(two), { running: 8, waiting: 2, kvCacheUsage: 0.5 });
});

test("a label value holding a brace or a space does not shift the value", () => {
  assert.deepEqual(parseEngineLoad('vllm:num_requests_running{model_name="a} b"} 7 1700000000000\nvllm:num_requests_waiting 0\n'), { running: 7, waiting: 0, kvCacheUsage: 0 });
});
