// Training through the workflow with the stand-in trainer (no GPU here; it speaks the real
// trainer's progress protocol and writes a real safetensors file) on a node whose nvidia-smi is a
// stand-in reporting one 24 GiB card: a run end to end with its artifact downloaded byte-identical,
// a cancel mid-run that stops the trainer's process group, a node lost mid-run and the run done
// again elsewhere, bad data refused with its line number.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startChild, stopChild, waitFor } from "../../common/children.ts";
import { prisma } from "../../common/db.ts";
import { freePort, startPlatform, type Platform } from "../helpers/platform.ts";

interface Run {
  id: string;
  state: string;
  progress: { step: number; steps: number; loss: number; peakMemoryMiB: number; nodeId: string; attempt: number };
  artifactFileId: string | null;
  error: string | null;
}

describe("training", () => {
  let p: Platform;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-train-"));
  const data = path.join(dir, "pairs.ndjson");
  const pairs = Array.from({ length: 10 }, (_, i) => JSON.stringify({ q: `what is ${i} + ${i}?`, a: String(2 * i) })).join("\n") + "\n";

  before(async () => {
    const smi = path.join(dir, "nvidia-smi");
    fs.writeFileSync(smi, '#!/bin/sh\necho "0, NVIDIA L4, GPU-00000000-0000-0000-0000-000000000000, 24576, 1, 8.9, 550.54.15, 35, 20.1, 72.00, 0, 4, 4, 16, 16"\n', { mode: 0o755 });
    fs.writeFileSync(data, pairs);
    process.env.LLMGW_NVIDIA_SMI = smi;
    process.env.LLMGW_TRAINER = "standin";
    p = await startPlatform();
  });
  after(async () => {
    await p?.stop();
  });

  const ctlJson = async <T>(args: string[]): Promise<T> => {
    const r = await p.ctl([...args, "--json"]);
    assert.equal(r.code, 0, `ctl ${args.join(" ")}: ${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  };
  const runDir = (id: string, attempt = 1) => path.join(p.dataDir, "agent", `node-${p.id}`, "train", `${id}-${attempt}`);

  it("runs the stand-in end to end and the artifact downloads byte-identical", async () => {
    const { id } = await ctlJson<{ id: string; lines: number }>(["train", "start", "--base", "tiny-base", "--data", data, "--gpu-memory", "8000", "--params", '{"rank":4,"epochs":3,"step_ms":20}']);
    const run = await ctlJson<Run>(["train", "show", id, "--follow"]);
    assert.equal(run.state, "completed", run.error ?? "");
    assert.equal(run.progress.steps, 9, "3 epochs of 10 pairs in batches of 4");
    assert.equal(run.progress.step, 9);
    assert.ok(run.progress.loss > 0 && run.progress.peakMemoryMiB > 0);
    assert.equal(run.progress.nodeId, `node-${p.id}`);

    const out = path.join(dir, "adapter.safetensors");
    const dl = await ctlJson<{ bytes: number; sha256: string }>(["train", "download", id, "-o", out]);
    const original = fs.readFileSync(path.join(runDir(id), "out", "adapter_model.safetensors"));
    const got = fs.readFileSync(out);
    assert.equal(dl.bytes, original.length);
    assert.ok(got.equals(original), "byte-identical to what the trainer wrote");
    const header = JSON.parse(got.subarray(8, 8 + Number(got.readBigUInt64LE(0))).toString()) as Record<string, { shape?: number[] }>;
    assert.deepEqual(header["base_model.model.layers.0.self_attn.q_proj.lora_A.weight"]?.shape, [4, 64], "a real safetensors file of the asked rank");

    const raw = await fetch(`${p.adminUrl}/api/v1/training/${id}/artifact`, { headers: { authorization: `Bearer ${p.adminToken}` } });
    assert.ok(Buffer.from(await raw.arrayBuffer()).equals(original), "the raw route serves the same bytes");

    // Its GPU time: one GPU × the trainer's run on the node, from its start to its exit there.
    const { startedAt } = JSON.parse(fs.readFileSync(path.join(runDir(id), "record.json"), "utf8")) as { startedAt: number };
    const { endedAt } = JSON.parse(fs.readFileSync(path.join(runDir(id), "exit.json"), "utf8")) as { endedAt: number };
    const usage = await ctlJson<{ model: string; endpoint?: string; gpuSeconds: number }[]>(["usage", "--by", "model", "--gpu-seconds"]);
    const charged = usage.find((u) => u.model === "tiny-base")?.gpuSeconds ?? 0;
    assert.ok(charged >= (endedAt - startedAt) / 1000 - 1e-6 && endedAt > startedAt, `the run's ${(endedAt - startedAt) / 1000} GPU-seconds are in the report (${charged})`);
  });

  it("cancel mid-run stops the trainer's whole process group", async () => {
    const { id } = await ctlJson<{ id: string }>(["train", "start", "--base", "tiny-base", "--data", data, "--gpu-memory", "8000", "--params", '{"epochs":500,"step_ms":100}']);
    await waitFor("the trainer to take steps", async () => (await ctlJson<Run>(["train", "show", id])).progress.step >= 2, 60_000);
    const { pid } = JSON.parse(fs.readFileSync(path.join(runDir(id), "record.json"), "utf8")) as { pid: number };
    process.kill(-pid, 0); // its group runs

    await ctlJson(["train", "cancel", id]);
    const run = await waitFor("the run to end", async () => {
      const r = await ctlJson<Run>(["train", "show", id]);
      return r.state !== "running" && r.state !== "queued" ? r : null;
    }, 60_000);
    assert.equal(run.state, "cancelled");
    await waitFor("the trainer's process group to be gone", async () => {
      try {
        process.kill(-pid, 0);
        return false;
      } catch (err) {
        return (err as NodeJS.ErrnoException).code === "ESRCH";
      }
    }, 20_000);
    assert.ok(run.progress.step < run.progress.steps, "stopped before the end");
    const dl = await p.ctl(["train", "download", id]);
    assert.notEqual(dl.code, 0, "a cancelled run has no artifact");
  });

  it("a node lost mid-run: the run starts again on another node from the beginning", async (t) => {
    const other = `node-b-${p.id}`;
    const second = startChild("agent-b", ["agent"], { env: { ...p.env, LLMGW_NODE_ID: other, LLMGW_AGENT_PORT: String(await freePort()) }, logDir: path.join(p.dataDir, "logs") });
    t.after(() => stopChild(second));
    await waitFor("the second agent to register", async () => (await p.admin<{ data: { id: string }[] }>("GET", "/nodes")).data.some((n) => n.id === other), 60_000);

    const { id } = await ctlJson<{ id: string }>(["train", "start", "--base", "tiny-base", "--data", data, "--gpu-memory", "8000", "--params", '{"epochs":20,"step_ms":100}']);
    const first = await waitFor("the first attempt to take steps", async () => {
      const r = await ctlJson<Run>(["train", "show", id]);
      return r.progress.step >= 2 ? r : null;
    }, 60_000);
    assert.equal(first.progress.attempt, 1);
    // The node is lost: its agent and its trainer die with it.
    const lost = first.progress.nodeId;
    const { pid } = JSON.parse(fs.readFileSync(path.join(p.dataDir, "agent", lost, "train", `${id}-1`, "record.json"), "utf8")) as { pid: number };
    if (lost === other) second.proc.kill("SIGKILL");
    else await p.kill("agent", "SIGKILL");
    process.kill(-pid, "SIGKILL");

    const run = await ctlJson<Run>(["train", "show", id, "--follow"]);
    assert.equal(run.state, "completed", run.error ?? "");
    assert.equal(run.progress.attempt, 2);
    assert.notEqual(run.progress.nodeId, lost, "the second attempt ran elsewhere");
    assert.equal(run.progress.step, run.progress.steps, "from the beginning to the end");
    // Both attempts are charged: the lost one the run time its node last reported (it took ≥ 2 steps of 100 ms), as failed.
    const db = prisma(p.env.DATABASE_URL);
    try {
      const rows = await db.usageEvent.findMany({ where: { id: { in: [`job-${id}-1`, `job-${id}-2`] } }, orderBy: { id: "asc" } });
      assert.deepEqual(rows.map((r) => [r.id, r.status]), [[`job-${id}-1`, 500], [`job-${id}-2`, 200]]);
      assert.ok(Number(rows[0]!.gpuSeconds) >= 0.2, `the lost attempt's GPU-seconds: ${rows[0]!.gpuSeconds}`);
    } finally {
      await db.$disconnect();
    }
    if (lost !== other) await p.start("agent");
  });

  it("refuses a bad data file with its line number, before anything starts", async () => {
    const bad = path.join(dir, "bad.ndjson");
    fs.writeFileSync(bad, `${JSON.stringify({ q: "a", a: "b" })}\n${JSON.stringify({ q: "c", a: "d" })}\n{"q": "e", "answer": "f"}\n`);
    const before = (await ctlJson<Run[]>(["train", "list"])).length;
    const r = await p.ctl(["train", "start", "--base", "tiny-base", "--data", bad, "--gpu-memory", "8000"]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /data line 3: unexpected key "answer"/);
    assert.equal((await ctlJson<Run[]>(["train", "list"])).length, before, "no run was made");
  });
});
