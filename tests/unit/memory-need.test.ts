// The GPU memory a replica needs: weights plus the KV cache of its context, split over its GPUs,
// never below the profile's floor; and placement refusing a node the KV cache would not fit.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { kvCacheBytes, memoryNeed } from "../../activities/memory-need.ts";
import { place } from "../../activities/placement-plan.ts";
import { memory } from "../../common/catalog.ts";

// Llama-3-8B's shape: 32 layers, 8 KV heads of 128, fp16: 128 KiB of KV cache per token.
const llama8b = memory.parse({ weights_gb: 15, layers: 32, kv_heads: 8, head_dim: 128 });

describe("memoryNeed", () => {
  it("computes the KV cache from the shape and the context", () => {
    assert.equal(kvCacheBytes(llama8b, 1), 128 * 1024);
    assert.equal(kvCacheBytes(llama8b, 8192), 1024 ** 3);
    assert.equal(kvCacheBytes({ ...llama8b, kv_cache_dtype_bytes: 1, concurrent_sequences: 8 }, 8192), 8 * 1024 ** 3 / 2);
    assert.equal(kvCacheBytes(memory.parse({ weights_gb: 15 }), 8192), 0, "no shape, no KV estimate");
  });

  const cases: { name: string; mem: Parameters<typeof memoryNeed>[0]; ctx: number; gpus: number; floorGb: number; perGpuMiB: number; basis: RegExp }[] = [
    { name: "weights plus an 8k context on one GPU", mem: llama8b, ctx: 8192, gpus: 1, floorGb: 0, perGpuMiB: 15 * 1024 + 1024, basis: /weights 15360 MiB \+ KV cache 1024 MiB \(8192 tokens × 1 sequence/ },
    { name: "a 128k context needs 16 GiB more", mem: llama8b, ctx: 131072, gpus: 1, floorGb: 0, perGpuMiB: 15 * 1024 + 16 * 1024, basis: /KV cache 16384 MiB/ },
    { name: "split over tensor-parallel GPUs", mem: llama8b, ctx: 131072, gpus: 2, floorGb: 0, perGpuMiB: (31 * 1024) / 2, basis: /over 2 GPU/ },
    { name: "the profile's floor when it is larger", mem: llama8b, ctx: 8192, gpus: 1, floorGb: 40, perGpuMiB: 40 * 1024, basis: /profile minimum 40 GB \(more than weights/ },
    { name: "only the floor when the catalog gives no size", mem: undefined, ctx: 8192, gpus: 1, floorGb: 20, perGpuMiB: 20 * 1024, basis: /^profile minimum 20 GB$/ },
    { name: "CPU replicas need no GPU memory", mem: llama8b, ctx: 8192, gpus: 0, floorGb: 0, perGpuMiB: 0, basis: /profile minimum 0 GB/ },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = memoryNeed(c.mem, c.ctx, c.gpus, c.floorGb);
      assert.equal(got.perGpuMiB, c.perGpuMiB);
      assert.match(got.basis, c.basis);
    });
  }

  it("placement fits an 8k context on a 24 GiB card but not a 128k one", () => {
    const fleet = [{ id: "a", cordoned: false, fresh: true, labels: {}, gpus: [{ index: 0, memoryTotalMiB: 24 * 1024, memoryUsedMiB: 0, computeCapability: 8.9 }], busyGpus: [], modelReplicas: 0, totalReplicas: 0 }];
    const req = (ctx: number) => ({ count: 1, gpusPerReplica: 1, minComputeCapability: 0, memoryPerGpuMiB: memoryNeed(llama8b, ctx, 1, 0).perGpuMiB, labels: {}, avoid: [] });
    assert.equal(place(fleet, req(8192)).ok, true);
    const refused = place(fleet, req(131072));
    assert.equal(refused.ok, false);
    assert.match(refused.ok ? "" : refused.reason, /needs 31\.0 GiB on each of 1 GPU\(s\); the most any free GPU offers is 21\.6 GiB/);
  });
});
