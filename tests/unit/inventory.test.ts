// The nvidia-smi parsers (on outputs recorded from several driver generations, replayed by
// tests/fixtures/nvidia-smi/replay.sh), the memory read meter and the node-label parser of
// agent/discovery/.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { discoverGpus, GPU_QUERY_COLUMNS, parseLabels, parseMigList, parseNvidiaSmiCsv, inventory } from "../../agent/discovery/inventory.ts";
import { measureMemoryRead, startMemoryReadMeter } from "../../agent/discovery/memory-read.ts";

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/nvidia-smi");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-inventory-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** An nvidia-smi that answers as the recorded driver `name` did. */
export function recordedNvidiaSmi(name: string): string {
  const file = path.join(tmp, `nvidia-smi-${name}`);
  fs.writeFileSync(file, `#!/bin/sh\nexec bash ${JSON.stringify(path.join(FIXTURES, "replay.sh"))} ${JSON.stringify(path.join(FIXTURES, name))} "$@"\n`, { mode: 0o755 });
  return file;
}

// The columns the agent asked before it asked for sensors and the PCIe link.
const FIRST_SEVEN = GPU_QUERY_COLUMNS.slice(0, 7);

const NO_SENSORS = {
  temperatureC: 0,
  powerDrawW: 0,
  powerLimitW: 0,
  utilizationPct: 0,
  pcieGenCurrent: 0,
  pcieGenMax: 0,
  pcieWidthCurrent: 0,
  pcieWidthMax: 0,
  mig: [],
};

test("parses an 8×H100 node's nvidia-smi output", () => {
  // nvidia-smi --query-gpu=index,name,uuid,memory.total,memory.used,compute_cap,driver_version --format=csv,noheader,nounits
  const csv = [
    "0, NVIDIA H100 80GB HBM3, GPU-4a3e5c1d-8f2b-4a7e-9c61-2d0f3b8e7a15, 81559, 1, 9.0, 550.54.15",
    "1, NVIDIA H100 80GB HBM3, GPU-9b1c2d3e-4f5a-6b7c-8d9e-0f1a2b3c4d5e, 81559, 74213, 9.0, 550.54.15",
    "",
  ].join("\n");
  const gpus = parseNvidiaSmiCsv(csv, FIRST_SEVEN);
  assert.equal(gpus.length, 2);
  assert.deepEqual(gpus[0], {
    index: 0,
    name: "NVIDIA H100 80GB HBM3",
    uuid: "GPU-4a3e5c1d-8f2b-4a7e-9c61-2d0f3b8e7a15",
    memoryTotalMib: 81559,
    memoryUsedMib: 1,
    computeCapability: "9.0",
    driverVersion: "550.54.15",
    ...NO_SENSORS,
  });
  assert.equal(gpus[1]?.index, 1);
  assert.equal(gpus[1]?.memoryUsedMib, 74213);
});

test("parses an older driver's output, asked without compute_cap, and unknown values", () => {
  // Driver 470 does not know compute_cap: the agent asks again without that column.
  const legacy = FIRST_SEVEN.filter((c) => c !== "compute_cap");
  const csv = "0, Tesla V100-SXM2-16GB, GPU-0c6d1f2e-3a4b-5c6d-7e8f-9a0b1c2d3e4f, 16160, 0, 470.82.01\r\n";
  assert.deepEqual(parseNvidiaSmiCsv(csv, legacy), [
    {
      index: 0,
      name: "Tesla V100-SXM2-16GB",
      uuid: "GPU-0c6d1f2e-3a4b-5c6d-7e8f-9a0b1c2d3e4f",
      memoryTotalMib: 16160,
      memoryUsedMib: 0,
      computeCapability: "",
      driverVersion: "470.82.01",
      ...NO_SENSORS,
    },
  ]);
  // "[N/A]" / "[Not Supported]" become 0 or "", and a name holding a comma stays whole.
  const odd = "3, NVIDIA A100-SXM4-40GB, MIG 3g.20gb, GPU-aa, [N/A], [Not Supported], 8.0, 535.129.03";
  const [g] = parseNvidiaSmiCsv(odd, FIRST_SEVEN);
  assert.equal(g?.name, "NVIDIA A100-SXM4-40GB, MIG 3g.20gb");
  assert.equal(g?.memoryTotalMib, 0);
  assert.equal(g?.memoryUsedMib, 0);
  assert.equal(g?.computeCapability, "8.0");
  assert.equal(g?.driverVersion, "535.129.03");
  assert.deepEqual(parseNvidiaSmiCsv("garbage\n\n"), []);
});

test("parses node labels", () => {
  assert.deepEqual(parseLabels("zone=a, gpu = h100,,rack=r1=x"), { zone: "a", gpu: "h100", rack: "r1=x" });
  assert.deepEqual(parseLabels(undefined), {});
  assert.throws(() => parseLabels("novalue"), /LLMGW_NODE_LABELS/);
});

test("driver 470 (V100): compute_cap refused, asked again without it; idle links at Gen1 of Gen3", async () => {
  const gpus = await discoverGpus(recordedNvidiaSmi("470-v100"));
  assert.equal(gpus.length, 4);
  assert.deepEqual(gpus[0], {
    index: 0,
    name: "Tesla V100-SXM2-32GB",
    uuid: "GPU-3f1c9a72-5be4-0d1e-8c2a-7b61e4d0a915",
    memoryTotalMib: 32510,
    memoryUsedMib: 0,
    computeCapability: "",
    driverVersion: "470.182.03",
    temperatureC: 34,
    powerDrawW: 42.61,
    powerLimitW: 300,
    utilizationPct: 0,
    pcieGenCurrent: 1,
    pcieGenMax: 3,
    pcieWidthCurrent: 16,
    pcieWidthMax: 16,
    mig: [],
  });
  assert.deepEqual(gpus.map((g) => g.index), [0, 1, 2, 3]);
});

test("driver 535 (H100): every column, a busy pair, and a card trained down to x8", async () => {
  const gpus = await discoverGpus(recordedNvidiaSmi("535-h100"));
  assert.equal(gpus.length, 4);
  const [g0, , , g3] = gpus;
  assert.equal(g0?.computeCapability, "9.0");
  assert.equal(g0?.driverVersion, "535.161.08");
  assert.equal(g0?.memoryUsedMib, 72519);
  assert.equal(g0?.utilizationPct, 87);
  assert.equal(g0?.powerDrawW, 312.47);
  assert.equal(g0?.powerLimitW, 700);
  assert.equal(g0?.temperatureC, 41);
  assert.deepEqual([g3?.pcieGenCurrent, g3?.pcieGenMax, g3?.pcieWidthCurrent, g3?.pcieWidthMax], [5, 5, 8, 16]);
  assert.ok(gpus.every((g) => g.mig.length === 0));
});

test("driver 570 open module (A100): MIG devices from -L on their GPU, [N/A] utilization is 0", async () => {
  const gpus = await discoverGpus(recordedNvidiaSmi("570-open-a100-mig"));
  assert.equal(gpus.length, 2);
  assert.equal(gpus[0]?.driverVersion, "570.124.06");
  assert.equal(gpus[0]?.computeCapability, "8.0");
  assert.equal(gpus[0]?.utilizationPct, 0);
  assert.deepEqual(gpus[0]?.mig, [
    { profile: "3g.40gb", device: 0, uuid: "MIG-8c1e5a3f-0b7d-5e29-a4f6-3d9c2b1e7a04" },
    { profile: "2g.20gb", device: 1, uuid: "MIG-2f6a9d1c-7e3b-5a80-b2d4-6c0e8f1a3b97" },
    { profile: "1g.10gb", device: 2, uuid: "MIG-d4b07e2a-1c9f-58e3-8a6d-0e5f3c7b2d18" },
  ]);
  assert.deepEqual(gpus[1]?.mig, []);
  // A MIG line before any GPU line belongs to none.
  assert.equal(parseMigList("  MIG 1g.10gb     Device  0: (UUID: MIG-x)\n").size, 0);
});

test("no nvidia-smi: no GPUs and no error, and the node still describes itself", async () => {
  const missing = path.join(tmp, "no-such-nvidia-smi");
  assert.deepEqual(await discoverGpus(missing), []);
  const failing = path.join(tmp, "failing-nvidia-smi");
  fs.writeFileSync(failing, "#!/bin/sh\necho \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\"\nexit 9\n", { mode: 0o755 });
  assert.deepEqual(await discoverGpus(failing), []);
  const node = await inventory({ nodeId: "n", address: "127.0.0.1:1", dataDir: tmp, labels: {}, agentVersion: "t", nvidiaSmi: missing, memoryReadGbps: 12.5 });
  assert.deepEqual(node.gpus, []);
  assert.ok(Number(node.cpuCores) > 0 && Number(node.memoryTotalBytes) > 0 && Number(node.diskFreeBytes) > 0);
  assert.equal(node.memoryReadGbps, 12.5);
});

test("the memory read rate is measured off the event loop and the best is kept", async () => {
  const rate = await measureMemoryRead(64 << 20, 2);
  assert.ok(rate > 0.1 && rate < 10_000, `${rate} GB/s`);
  const meter = startMemoryReadMeter({ bytes: 32 << 20, passes: 1, everyMs: 10 });
  const hold = setInterval(() => undefined, 1000); // the meter's own timer does not keep a process up
  try {
    assert.equal(meter.best(), 0); // nothing measured yet: the start did not wait for it
    const first = await meter.measured();
    assert.ok(first > 0);
    const second = await meter.measured();
    assert.ok(second >= first && meter.best() === second);
  } finally {
    clearInterval(hold);
    meter.stop();
  }
});
