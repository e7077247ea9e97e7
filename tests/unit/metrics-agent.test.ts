// The agent's GPU telemetry: nvidia-smi's CSV parsed (unknown values left out, not reported as 0)
// and exported per GPU, with a stand-in nvidia-smi that prints what a real one prints.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { AgentMetrics, parseGpuTelemetry } from "../../agent/metrics.ts";

// nvidia-smi --query-gpu=index,uuid,memory.used,memory.total,utilization.gpu,power.draw,power.limit,temperature.gpu --format=csv,noheader,nounits
const H100 = [
  "0, GPU-4a3e5c1d-8f2b-4a7e-9c61-2d0f3b8e7a15, 74213, 81559, 97, 642.17, 700.00, 71",
  "1, GPU-9b1c2d3e-4f5a-6b7c-8d9e-0f1a2b3c4d5e, 1, 81559, 0, [N/A], 700.00, 33",
  "",
].join("\n");

test("parses nvidia-smi telemetry, leaving unknown values out", () => {
  const g = parseGpuTelemetry(H100);
  assert.equal(g.length, 2);
  assert.deepEqual(g[0], {
    index: "0",
    uuid: "GPU-4a3e5c1d-8f2b-4a7e-9c61-2d0f3b8e7a15",
    memoryUsedBytes: 74213 * 1024 * 1024,
    memoryTotalBytes: 81559 * 1024 * 1024,
    utilization: 0.97,
    powerWatts: 642.17,
    powerLimitWatts: 700,
    temperatureC: 71,
  });
  assert.equal(g[1]!.powerWatts, null);
});

test("exports each GPU's memory, utilization, power against its limit and temperature", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-smi-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const smi = path.join(dir, "nvidia-smi");
  fs.writeFileSync(smi, `#!/bin/sh\ncat <<'CSV'\n${H100}CSV\n`, { mode: 0o755 });
  const m = new AgentMetrics(() => [], smi);
  const text = await m.registry.metrics();
  assert.match(text, /llmgw_agent_gpu_power_watts\{gpu="0",uuid="GPU-4a3e5c1d-8f2b-4a7e-9c61-2d0f3b8e7a15"\} 642\.17/);
  assert.match(text, /llmgw_agent_gpu_power_limit_watts\{gpu="1",[^}]*\} 700/);
  assert.doesNotMatch(text, /llmgw_agent_gpu_power_watts\{gpu="1"/, "an unknown power draw is not reported as 0");
  assert.match(text, /llmgw_agent_gpu_utilization_ratio\{gpu="0",[^}]*\} 0\.97/);
  assert.match(text, /llmgw_agent_gpu_temperature_celsius\{gpu="1",[^}]*\} 33/);
  assert.match(text, /llmgw_agent_replicas\{state="ready"\} 0/);
  if (spawnSync("promtool", ["--version"]).status === 0) {
    const r = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    assert.equal(r.status, 0, r.stdout + r.stderr);
  } else t.diagnostic("promtool not installed (apt-get install prometheus): exposition not linted");
});

test("counts fetched bytes once and a restart only for an engine that had exited", async () => {
  const m = new AgentMetrics(() => [], "/nonexistent/nvidia-smi");
  const sent: number[] = [];
  const f = m.fetch((p) => sent.push(Number(p.bytes)));
  f.progress({ bytes: 100, total: 300, bytesPerSecond: 50, done: false, path: "" });
  assert.match(await m.registry.metrics(), /llmgw_agent_fetch_bytes_per_second 50/);
  f.progress({ bytes: 300, total: 300, bytesPerSecond: 80, done: true, path: "/w" });
  f.end();
  assert.deepEqual(sent, [100, 300]);
  m.starting("r1", "sim", []);
  m.starting("r1", "sim", [{ replicaId: "r1", state: "REPLICA_STATE_READY" }]);
  m.starting("r1", "sim", [{ replicaId: "r1", state: "REPLICA_STATE_EXITED" }]);
  const text = await m.registry.metrics();
  assert.match(text, /llmgw_agent_fetch_bytes_total 300/);
  assert.match(text, /llmgw_agent_fetch_bytes_per_second 0/);
  assert.match(text, /llmgw_agent_engine_starts_total\{engine="sim"\} 2/);
  assert.match(text, /llmgw_agent_engine_restarts_total\{engine="sim"\} 1/);
});
