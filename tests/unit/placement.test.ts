// Placement on tables of fleets: what fits where, spreading, avoidance, and the reason when
// nothing fits.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { place, type FleetNode, type Requirement } from "../../activities/placement-plan.ts";

const gpu = (index: number, totalGiB: number, cc: number, usedGiB = 0) => ({ index, memoryTotalMiB: totalGiB * 1024, memoryUsedMiB: usedGiB * 1024, computeCapability: cc });
const node = (id: string, over: Partial<FleetNode> = {}): FleetNode => ({
  id,
  cordoned: false,
  fresh: true,
  labels: {},
  gpus: [],
  busyGpus: [],
  modelReplicas: 0,
  totalReplicas: 0,
  ...over,
});
const cpu = (count: number, over: Partial<Requirement> = {}): Requirement => ({ count, gpusPerReplica: 0, minComputeCapability: 0, memoryPerGpuMiB: 0, labels: {}, avoid: [], ...over });
const onGpu = (count: number, gpus: number, cc: number, gib: number, over: Partial<Requirement> = {}) =>
  cpu(count, { gpusPerReplica: gpus, minComputeCapability: cc, memoryPerGpuMiB: gib * 1024, ...over });

const nodesOf = (p: ReturnType<typeof place>) => (p.ok ? p.replicas.map((r) => r.nodeId) : p.reason);

describe("place", () => {
  const cases: { name: string; fleet: FleetNode[]; req: Requirement; want: string[] | RegExp }[] = [
    { name: "CPU replicas spread over nodes", fleet: [node("a"), node("b")], req: cpu(4), want: ["a", "b", "a", "b"] },
    { name: "the node with fewer of this model first", fleet: [node("a", { modelReplicas: 2 }), node("b")], req: cpu(2), want: ["b", "b"] },
    { name: "then the least loaded", fleet: [node("a", { totalReplicas: 5 }), node("b", { totalReplicas: 1 })], req: cpu(1), want: ["b"] },
    { name: "cordoned and silent nodes are skipped", fleet: [node("a", { cordoned: true }), node("b", { fresh: false }), node("c")], req: cpu(2), want: ["c", "c"] },
    { name: "labels must match", fleet: [node("a", { labels: { zone: "x" } }), node("b", { labels: { zone: "y" } })], req: cpu(2, { labels: { zone: "y" } }), want: ["b", "b"] },
    { name: "a node where the model just failed is used last", fleet: [node("a"), node("b")], req: cpu(1, { avoid: ["a"] }), want: ["b"] },
    { name: "…but still used when nothing else fits", fleet: [node("a"), node("b", { cordoned: true })], req: cpu(1, { avoid: ["a"] }), want: ["a"] },
    {
      name: "GPUs: 90% of memory is usable",
      fleet: [node("a", { gpus: [gpu(0, 80, 9.0)] }), node("b", { gpus: [gpu(0, 80, 9.0, 10)] })],
      req: onGpu(2, 1, 8.0, 70),
      // 72 of a's 80 GiB are usable: one replica fits there; b has 10 GiB used, so 62 are left.
      want: /\(1 of 2 placed\).*a: needs 1 free GPU\(s\).*has 0 \(of 1, 1 in use\).*b: needs 70\.0 GiB on each of 1 GPU\(s\); the most any free GPU offers is 62\.0 GiB/,
    },
    {
      name: "GPUs: compute capability is honoured",
      fleet: [node("old", { gpus: [gpu(0, 80, 7.5)] }), node("new", { gpus: [gpu(0, 80, 9.0)] })],
      req: onGpu(1, 1, 8.0, 20),
      want: ["new"],
    },
    {
      name: "GPUs: each replica takes its own cards",
      fleet: [node("a", { gpus: [gpu(0, 80, 9.0), gpu(1, 80, 9.0), gpu(2, 80, 9.0)] })],
      req: onGpu(2, 2, 8.0, 20),
      want: /\(1 of 2 placed\).*a: needs 2 free GPU\(s\) with compute capability ≥ 8; has 1 \(of 3, 2 in use\)/,
    },
    { name: "a GPU model on a CPU node says so", fleet: [node("cpu-only")], req: onGpu(1, 1, 0, 1), want: /cpu-only: has no GPU/ },
    { name: "an empty fleet says so", fleet: [], req: cpu(1), want: /no node has registered/ },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = place(c.fleet, c.req);
      if (c.want instanceof RegExp) {
        assert.equal(got.ok, false, `expected a refusal, got ${JSON.stringify(got)}`);
        assert.match(nodesOf(got) as string, c.want);
      } else assert.deepEqual(nodesOf(got), c.want);
    });
  }

  it("gives each replica distinct GPU indexes, skipping busy ones", () => {
    const p = place([node("a", { gpus: [gpu(0, 80, 9), gpu(1, 80, 9), gpu(2, 80, 9), gpu(3, 80, 9)], busyGpus: [1] })], onGpu(1, 2, 8, 10));
    assert.ok(p.ok);
    assert.deepEqual(p.replicas[0]!.gpus, [0, 2]);
  });
});
