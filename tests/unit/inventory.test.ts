// The nvidia-smi CSV parser and the node-label parser of agent/discovery/inventory.ts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { GPU_QUERY_COLUMNS, parseLabels, parseNvidiaSmiCsv } from "../../agent/discovery/inventory.ts";

test("parses an 8×H100 node's nvidia-smi output", () => {
  // nvidia-smi --query-gpu=index,name,uuid,memory.total,memory.used,compute_cap,driver_version --format=csv,noheader,nounits
  const csv = [
    "0, NVIDIA H100 80GB HBM3, GPU-4a3e5c1d-8f2b-4a7e-9c61-2d0f3b8e7a15, 81559, 1, 9.0, 550.54.15",
    "1, NVIDIA H100 80GB HBM3, GPU-9b1c2d3e-4f5a-6b7c-8d9e-0f1a2b3c4d5e, 81559, 74213, 9.0, 550.54.15",
    "",
  ].join("\n");
  const gpus = parseNvidiaSmiCsv(csv);
  assert.equal(gpus.length, 2);
  assert.deepEqual(gpus[0], {
    index: 0,
    name: "NVIDIA H100 80GB HBM3",
    uuid: "GPU-4a3e5c1d-8f2b-4a7e-9c61-2d0f3b8e7a15",
    memoryTotalMib: 81559,
    memoryUsedMib: 1,
    computeCapability: "9.0",
    driverVersion: "550.54.15",
  });
  assert.equal(gpus[1]?.index, 1);
  assert.equal(gpus[1]?.memoryUsedMib, 74213);
});

test("parses an older driver's output, asked without compute_cap, and unknown values", () => {
  // Driver 470 does not know compute_cap: the agent asks again without that column.
  const legacy = GPU_QUERY_COLUMNS.filter((c) => c !== "compute_cap");
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
    },
  ]);
  // "[N/A]" / "[Not Supported]" become 0 or "", and a name holding a comma stays whole.
  const odd = "3, NVIDIA A100-SXM4-40GB, MIG 3g.20gb, GPU-aa, [N/A], [Not Supported], 8.0, 535.129.03";
  const [g] = parseNvidiaSmiCsv(odd);
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
