// Reclaiming a node from a real one-node Slurm (scripts/slurm.sh): the node waits in Slurm's
// draining state while a job runs, returns to llmgw when it ends and takes a replica; with a
// deadline, a job that outlives it is requeued; worker and agent restarts mid-way change nothing;
// a Slurm that does not answer never keeps the node.
import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, describe, it } from "node:test";
import { waitFor } from "../../common/children.ts";
import { uniqueModel, type Platform } from "../helpers/platform.ts";
import { cleanSlate, HOST, jobState, nodeState, sh, startSlurm, startSlurmPlatform, submitHeld, tmpDir, type SlurmOp } from "../helpers/slurm.ts";

type Op = SlurmOp;

describe("slurm reclaim", () => {
  let p: Platform;
  const dir = tmpDir();

  before(async () => {
    p = await startSlurmPlatform();
  });
  after(async () => {
    await p?.stop();
    await cleanSlate();
  });

  const ctlJson = async <T>(args: string[]): Promise<T> => {
    const r = await p.ctl([...args, "--json"]);
    assert.equal(r.code, 0, `ctl ${args.join(" ")}: ${r.stderr}`);
    return JSON.parse(r.stdout) as T;
  };
  const op = (id: string) => p.admin<Op>("GET", `/operations/${id}`);
  const cordoned = async () => (await p.admin<{ data: { id: string; cordoned: boolean }[] }>("GET", "/nodes")).data.find((n) => n.id === HOST)!.cordoned;
  const lend = async () => assert.equal((await ctlJson<Op>(["slurm", "lend", HOST, "--force", "--wait"])).status, "COMPLETED");
  const running = (id: string) => waitFor(`job ${id} to run`, async () => jobState(id) === "RUNNING", 60_000);

  it("waits in Slurm's draining state while a job runs, returns when it ends, then takes a replica", async () => {
    await lend();
    const job = submitHeld(dir);
    await running(job.id);

    const { operationId } = await ctlJson<{ operationId: string }>(["slurm", "reclaim", HOST]);
    await waitFor("the reclaim to wait for the job", async () => (await op(operationId)).progress?.phase === "waiting-jobs", 60_000, 100);
    assert.deepEqual(nodeState(), { state: "draining", reason: "llmgw: reclaim" });
    assert.equal((await op(operationId)).status, "RUNNING");
    assert.equal(await cordoned(), true, "not llmgw's while its job runs");

    fs.writeFileSync(job.release, "");
    const done = await waitFor("the reclaim to end", async () => ((await op(operationId)).status !== "RUNNING" ? op(operationId) : null), 120_000);
    assert.equal(done.status, "COMPLETED", done.error ?? "");
    assert.deepEqual(nodeState(), { state: "drained", reason: "llmgw: reclaim" }, "stays drained in Slurm, by llmgw");
    assert.equal(await cordoned(), false);

    const model = uniqueModel("back");
    const served = await p.ctl(["model", "serve", model, "--engine", "sim", "--replicas", "1", "--wait"]);
    assert.equal(served.code, 0, served.stderr);
    const { data } = await p.admin<{ data: { name: string; replicas: { node: string; state: string }[] }[] }>("GET", "/models");
    assert.deepEqual(data.find((m) => m.name === model)!.replicas.map((r) => [r.node, r.state]), [[HOST, "ready"]]);
    await p.ctl(["model", "serve", model, "--engine", "sim", "--replicas", "0", "--wait"]);
  });

  it("survives its agent restarting while it waits for the job", async () => {
    await lend();
    const job = submitHeld(dir);
    await running(job.id);
    const { operationId } = await ctlJson<{ operationId: string }>(["slurm", "reclaim", HOST]);
    await waitFor("the reclaim to wait for the job", async () => (await op(operationId)).progress?.phase === "waiting-jobs", 60_000, 100);
    await p.kill("agent", "SIGKILL");
    await p.kill("worker-temporal", "SIGKILL");
    await p.start("worker-temporal");
    await p.start("agent");
    assert.equal((await op(operationId)).status, "RUNNING", "still waiting: the job runs");
    assert.equal(await cordoned(), true);
    fs.writeFileSync(job.release, "");
    const done = await waitFor("the reclaim to end", async () => ((await op(operationId)).status !== "RUNNING" ? op(operationId) : null), 120_000);
    assert.equal(done.status, "COMPLETED", done.error ?? "");
    assert.equal(nodeState().state, "drained");
    assert.equal(await cordoned(), false);
  });

  it("requeues a job that outlives the deadline", async () => {
    await lend();
    const job = submitHeld(dir);
    await running(job.id);
    const done = await ctlJson<Op>(["slurm", "reclaim", HOST, "--deadline", "2s", "--wait"]);
    assert.equal(done.status, "COMPLETED");
    assert.equal(await cordoned(), false);
    assert.equal(nodeState().state, "drained");
    const info = sh("scontrol", ["show", "job", job.id]);
    assert.match(info, /Restarts=1\b/, "the job was requeued");
    assert.notEqual(jobState(job.id), "RUNNING", "and no longer runs on the reclaimed node");
    sh("scancel", [job.id]);
  });

  it("a Slurm that does not answer does not keep the node from llmgw", async () => {
    await lend();
    sh("bash", ["scripts/slurm.sh", "stop"]);
    try {
      const done = await ctlJson<Op>(["slurm", "reclaim", HOST, "--wait"]);
      assert.equal(done.status, "COMPLETED");
      assert.match(done.progress?.message ?? "", /returns to llmgw regardless/);
      assert.equal(await cordoned(), false);
    } finally {
      startSlurm();
    }
  });
});
