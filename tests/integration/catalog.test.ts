// The catalog through ctl: model.yaml added and checked (errors say what and where), served
// from the catalog without naming an engine, placement explained, removal refused while served.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

describe("the catalog", () => {
  let p: Platform;
  const model = uniqueModel("cat");
  const file = (name: string, yaml: string) => {
    const f = path.join(p.dataDir, name);
    fs.writeFileSync(f, yaml);
    return f;
  };

  before(async () => {
    p = await startPlatform();
  });
  after(async () => {
    await p?.stop();
  });

  it("adds a model from model.yaml and serves it without naming an engine", async () => {
    const f = file(
      "ok.yaml",
      `name: ${model}
licence: apache-2.0
versions:
  - version: v2
    engine: sim
    args: ["--max-tokens-default", "5"]
    context_length: 2048
    trained_context: 8192
profiles:
  - name: cpu
    replicas: 1
`,
    );
    const added = await p.ctl(["model", "add", "-f", f, "--json"]);
    assert.equal(added.code, 0, added.stderr);
    assert.equal((JSON.parse(added.stdout) as { created: boolean }).created, true);
    const served = await p.ctl(["model", "serve", model, "--replicas", "1", "--wait", "--json"]);
    assert.equal(served.code, 0, served.stderr);
    const shown = JSON.parse((await p.ctl(["model", "show", model, "--json"])).stdout) as { replicas: { version: string; state: string }[]; versions: { engine: string }[] };
    assert.deepEqual(shown.replicas.map((r) => [r.version, r.state]), [["v2", "ready"]]);
    assert.equal(shown.versions[0]!.engine, "sim");
  });

  const bad: [string, string, RegExp][] = [
    ["a context longer than trained", `name: bad1\nversions: [{version: v1, engine: sim, context_length: 9000, trained_context: 4096}]`, /versions\.0\.context_length: 9000 is more than the 4096 tokens/],
    ["an unknown engine", `name: bad2\nversions: [{version: v1, engine: vllmm}]`, /versions\.0\.engine: unknown engine; known: sim, /],
    ["a GPU profile no node could ever hold", `name: bad3\nversions: [{version: v1, engine: vllm}]\nprofiles: [{name: big, gpu: {min_compute_capability: 8.0, min_memory_gb: 40}, gpus_per_replica: 1}]`, /profiles\.0 \(big\), version v1: no node has 1 GPU\(s\)/],
    [
      "a context whose KV cache no node could hold",
      `name: bad5\nversions: [{version: v1, engine: vllm, context_length: 131072, memory: {weights_gb: 16, layers: 32, kv_heads: 8, head_dim: 128}}]\nprofiles: [{name: big, gpu: {min_memory_gb: 1}, gpus_per_replica: 1}]`,
      /version v1: no node has 1 GPU\(s\) .* 32\.0 GiB usable on each \(weights 16384 MiB \+ KV cache 16384 MiB \(131072 tokens/,
    ],
    ["a half-given model shape", `name: bad6\nversions: [{version: v1, engine: sim, memory: {layers: 32}}]`, /versions\.0\.memory: layers, kv_heads and head_dim go together/],
    ["a misspelt field", `name: bad4\nversions: [{version: v1, engine: sim, contxt_length: 5}]`, /versions\.0: Unrecognized key/],
  ];
  for (const [what, yaml, want] of bad) {
    it(`refuses ${what}, saying where`, async () => {
      const r = await p.ctl(["model", "add", "-f", file(`${what.length}.yaml`, yaml)]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, want);
    });
  }

  it("explains why a GPU model cannot be placed on a CPU-only fleet", async () => {
    const gpuModel = uniqueModel("gpu");
    // Added while no profile is checked against the fleet: a catalog entry without a GPU profile…
    assert.equal((await p.ctl(["model", "add", "-f", file("g.yaml", `name: ${gpuModel}\nversions: [{version: v1, engine: sim}]`)])).code, 0);
    // …then its profile asks for a GPU through the admin API directly, as a later edit would.
    const { prisma } = await import("../../common/db.ts");
    const db = prisma(p.env.DATABASE_URL);
    await db.model.update({ where: { name: gpuModel }, data: { profiles: [{ name: "gpu", gpu: { min_compute_capability: 8, min_memory_gb: 10 }, gpus_per_replica: 2, replicas: 1, labels: {} }] } });
    // The version's shape: the need is its weights plus the KV cache of its 4096-token context.
    await db.modelVersion.updateMany({ where: { modelName: gpuModel }, data: { memory: { weights_gb: 30, layers: 32, kv_heads: 8, head_dim: 128, concurrent_sequences: 4 } } });
    await db.$disconnect();
    const r = await p.ctl(["model", "explain-placement", gpuModel, "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const plan = JSON.parse(r.stdout) as { ok: boolean; nodes: { node: string; reason: string }[]; need: { per_gpu_mib: number; basis: string } };
    assert.equal(plan.ok, false);
    assert.equal(plan.nodes[0]!.reason, "has no GPU");
    // 30 GiB of weights + 2·32·8·128·2 B × 4096 tokens × 4 sequences (2 GiB), over 2 GPUs.
    assert.equal(plan.need.per_gpu_mib, (30 * 1024 + 2048) / 2);
    assert.match(plan.need.basis, /KV cache 2048 MiB \(4096 tokens × 4 sequence/);
  });

  it("refuses to remove a model that still has replicas, then removes it once scaled to zero", async () => {
    const refused = await p.ctl(["model", "remove", model]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /still has 1 replica/);
    assert.equal((await p.ctl(["model", "serve", model, "--replicas", "0", "--wait"])).code, 0);
    assert.equal(p.enginePids(model).length, 0);
    assert.equal((await p.ctl(["model", "remove", model])).code, 0);
    const models = JSON.parse((await p.ctl(["models", "--json"])).stdout) as { name: string }[];
    assert.ok(!models.some((m) => m.name === model));
  });
});
