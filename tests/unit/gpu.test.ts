// Whether an engine shows up on its GPUs (agent/supervisor/gpu-presence.ts): recorded
// --query-compute-apps output, process groups read from a /proc laid out like Linux's, and the
// whole check against a live process replayed by a recorded nvidia-smi.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { missingGpus, onItsGpus, parseComputeApps, processGroupPids } from "../../agent/supervisor/gpu-presence.ts";

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/nvidia-smi");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-gpu-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const H100_0 = "GPU-4a3e5c1d-8f2b-4a7e-9c61-2d0f3b8e7a15";
const H100_1 = "GPU-9b1c2d3e-4f5a-6b7c-8d9e-0f1a2b3c4d5e";
const H100_2 = "GPU-1d7f3e9a-0c2b-48d6-a5e1-93b7c0f4d2a8";

test("parses recorded compute apps; blank and malformed lines are skipped", () => {
  const apps = parseComputeApps(fs.readFileSync(path.join(FIXTURES, "535-h100", "compute-apps.csv"), "utf8"));
  assert.deepEqual(apps, [
    { pid: 48390, gpuUuid: H100_0, usedMemoryMib: 72500 },
    { pid: 48391, gpuUuid: H100_1, usedMemoryMib: 72500 },
  ]);
  assert.deepEqual(parseComputeApps(fs.readFileSync(path.join(FIXTURES, "470-v100", "compute-apps.csv"), "utf8")), []);
  assert.deepEqual(parseComputeApps("No running processes found\n[N/A], GPU-x, 1\n7, GPU-y, [N/A]\n"), [{ pid: 7, gpuUuid: "GPU-y", usedMemoryMib: 0 }]);
});

test("an engine is on its GPUs only when its group holds each of them", () => {
  const apps = parseComputeApps(fs.readFileSync(path.join(FIXTURES, "535-h100", "compute-apps.csv"), "utf8"));
  // vLLM TP=2: the leader 48213 holds no GPU, its workers 48390/48391 do.
  const group = new Set([48213, 48390, 48391]);
  assert.deepEqual(missingGpus(apps, group, [H100_0, H100_1]), []);
  assert.deepEqual(missingGpus(apps, group, [H100_0, H100_1, H100_2]), [H100_2]);
  // Another engine's processes on the right GPUs do not count.
  assert.deepEqual(missingGpus(apps, new Set([48213, 50001]), [H100_0]), [H100_0]);
});

test("process groups are read from /proc/<pid>/stat, comm with spaces and parentheses included", () => {
  const proc = path.join(tmp, "proc");
  const stat = (pid: number, comm: string, pgrp: number) => {
    fs.mkdirSync(path.join(proc, String(pid)), { recursive: true });
    fs.writeFileSync(path.join(proc, String(pid), "stat"), `${pid} (${comm}) S 1 ${pgrp} ${pgrp} 0 -1 4194560 0 0 0 0\n`);
  };
  stat(48213, "python3", 48213);
  stat(48390, "ray::Worker (x) 1", 48213);
  stat(48391, "pt_main_thread", 48213);
  stat(50001, "python3", 50001);
  fs.mkdirSync(path.join(proc, "self"), { recursive: true });
  assert.deepEqual([...processGroupPids(48213, proc)].sort(), [48213, 48390, 48391]);
  assert.deepEqual([...processGroupPids(99, proc)], []);
});

test("the check against a live process group and a recorded nvidia-smi; no GPUs means on them", async () => {
  const child = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
  const pid = child.pid!;
  try {
    // The H100 recording, with this process on GPU 0 only.
    const dir = path.join(tmp, "h100-live");
    fs.cpSync(path.join(FIXTURES, "535-h100"), dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "compute-apps.csv"), `${pid}, ${H100_0}, 1200\n`);
    const smi = path.join(tmp, "nvidia-smi-live");
    fs.writeFileSync(smi, `#!/bin/sh\nexec bash ${JSON.stringify(path.join(FIXTURES, "replay.sh"))} ${JSON.stringify(dir)} "$@"\n`, { mode: 0o755 });
    assert.equal(await onItsGpus(pid, [0], smi), true);
    assert.equal(await onItsGpus(pid, [0, 1], smi), false);
    assert.equal(await onItsGpus(pid, [7], smi), false); // an index this node does not have
    assert.equal(await onItsGpus(pid, [], smi), true);
    // A CPU node: nvidia-smi absent.
    assert.equal(await onItsGpus(pid, [0], path.join(tmp, "absent-nvidia-smi")), true);
  } finally {
    process.kill(-pid, "SIGKILL");
  }
});
