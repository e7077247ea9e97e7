// A replica's health as routing sees it: the breaker, the smoothed TTFT, the engine's metrics.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Breaker } from "../../gateway/router/breaker.ts";
import { parseEngineLoad } from "../../gateway/router/engine-metrics.ts";
import { SmoothedTtft } from "../../gateway/router/ttft.ts";

describe("breaker", () => {
  it("opens after N failures in a row, not after fewer or interrupted ones", () => {
    const b = new Breaker(3, 1000);
    b.failure(0);
    b.failure(0);
    b.success();
    b.failure(0);
    b.failure(0);
    assert.equal(b.state, "closed");
    b.failure(10);
    assert.equal(b.state, "open");
    assert.equal(b.allows(500), false);
  });

  it("after the cool-down lets exactly one probe through; success closes it", () => {
    const b = new Breaker(1, 1000);
    b.failure(0);
    assert.equal(b.allows(999), false);
    assert.equal(b.allows(1000), true);
    b.begin(1000);
    assert.equal(b.state, "half-open");
    assert.equal(b.allows(1001), false, "a second request waits for the probe");
    b.success();
    assert.equal(b.state, "closed");
    assert.equal(b.allows(1002), true);
  });

  it("a failed probe reopens it for another cool-down; an abandoned probe frees the slot", () => {
    const b = new Breaker(1, 1000);
    b.failure(0);
    b.begin(1000);
    b.failure(1100);
    assert.equal(b.state, "open");
    assert.equal(b.allows(2000), false);
    assert.equal(b.allows(2100), true);
    b.begin(2100);
    b.abandon();
    assert.equal(b.allows(2101), true);
  });
});

describe("smoothed TTFT", () => {
  it("moves toward new measurements and forgets after a quiet spell", () => {
    const t = new SmoothedTtft(0.5, 60_000);
    assert.equal(t.get(0), 0);
    t.observe(100, 0);
    assert.equal(t.get(0), 100);
    t.observe(200, 1000);
    assert.equal(t.get(1000), 150);
    assert.equal(t.get(61_001), 0, "forgotten");
    t.observe(40, 70_000);
    assert.equal(t.get(70_000), 40, "a fresh start, not mixed with the forgotten value");
  });
});

describe("engine metrics", () => {
  it("reads vLLM's running, waiting and KV cache usage, summing label sets", () => {
    const text = [
      "# HELP vllm:num_requests_running Number of requests in model execution batches.",
      "# TYPE vllm:num_requests_running gauge",
      'vllm:num_requests_running{engine="0",model_name="m"} 3.0',
      'vllm:num_requests_running{engine="1",model_name="m"} 2.0',
      'vllm:num_requests_waiting{model_name="we}ird"} 7 1712345678',
      'vllm:kv_cache_usage_perc{model_name="m"} 0.25',
      'vllm:gpu_cache_usage_perc{model_name="m"} 0.99',
      'vllm:num_requests_running_other{model_name="m"} 100',
      "",
    ].join("\n");
    assert.deepEqual(parseEngineLoad(text), { running: 5, waiting: 7, kvCacheUsage: 0.25 });
  });

  it("falls back to the older gpu_cache_usage_perc, and knows text that is not an engine's", () => {
    assert.deepEqual(parseEngineLoad("vllm:num_requests_waiting 1\nvllm:gpu_cache_usage_perc 0.5\n"), { running: 0, waiting: 1, kvCacheUsage: 0.5 });
    assert.equal(parseEngineLoad("up 1\n"), null);
  });
});
