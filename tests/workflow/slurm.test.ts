// The Slurm lend and reclaim workflows' decisions, on the time-skipping test server with stand-in
// activities: a lend moves a replica elsewhere before it resumes the node in Slurm, refuses one
// with no room unless forced, and gives the node back to llmgw when it cannot lend; a reclaim
// waits for the jobs until its deadline (measured from the workflow's own clock), then requeues
// them, and never lets a Slurm that does not answer keep the node. The real Slurm is proven in
// tests/integration/slurm-lend.test.ts and slurm-reclaim.test.ts.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { WorkflowFailedError } from "@temporalio/client";
import type { SlurmProgress, SlurmView } from "../../workflows/slurm-types.ts";
import { standInFleet } from "../helpers/standin-fleet.ts";
import { recorded, timeSkippingEnv, type SkippingEnv } from "../helpers/time-skipping.ts";

let t: SkippingEnv;
before(async () => {
  t = await timeSkippingEnv();
});
after(async () => {
  await t?.close();
});

const view = (over: Partial<SlurmView> = {}): SlurmView => ({ available: true, state: "IDLE", reason: "", drained: false, drainedByLlmgw: false, jobs: [], error: "", ...over });

/** A node n1 serving one replica of m, another node with room (or not), and Slurm answering `slurm`. */
function lendStandIns(opts: { room: boolean; resume?: SlurmView; usable?: SlurmView }) {
  const fleet = standInFleet("m", ["v1"]);
  const cordon: boolean[] = [];
  const r = recorded({
    ...fleet.activities,
    setCordon: async (i: { nodeId: string; cordoned: boolean }) => void cordon.push(i.cordoned),
    nodeReplicas: async () => [...fleet.live.values()].map(({ ready: _r, ...ref }) => ref),
    roomElsewhere: async () => (opts.room ? { nodeId: "n2", gpus: [0] } : null),
    waitNodeEmpty: async () => undefined,
    slurmResume: async () => opts.resume ?? view(),
    waitSlurmUsable: async () => opts.usable ?? view(),
  });
  return { fleet, cordon, ...r };
}

const lend = (s: ReturnType<typeof lendStandIns>, id: string, force: boolean) =>
  t.run(s.activities, (taskQueue) => t.client.workflow.execute("slurmLend", { taskQueue, workflowId: id, args: [{ nodeId: "n1", force }] })) as Promise<SlurmProgress>;
const failure = (p: Promise<unknown>) => p.then(() => assert.fail("the workflow succeeded"), (e: unknown) => (assert.ok(e instanceof WorkflowFailedError), e.cause));

describe("slurm lend", () => {
  it("moves a replica to a node with room (ready before the old one is retired), then resumes the node in Slurm", async () => {
    const s = lendStandIns({ room: true });
    const p = await lend(s, "lend-move", false);
    assert.equal(p.phase, "done");
    assert.equal(p.message, "lent: IDLE in Slurm");
    assert.deepEqual(s.names(), [
      "setCordon", "nodeReplicas", "roomElsewhere", "versionSpec", "startReplica", "bringUpReplica", "drainReplica", "stopReplica",
      "waitNodeEmpty", "slurmResume", "waitSlurmUsable",
    ]);
    const moved = [...s.fleet.live.values()];
    assert.deepEqual(moved.map((r) => [r.version, r.nodeId, r.ready]), [["v1", "n2", true]]);
    assert.deepEqual(s.cordon, [true], "a lent node stays cordoned in llmgw");
  });

  it("refuses a replica with no room elsewhere, and gives the node back", async () => {
    const s = lendStandIns({ room: false });
    const cause = await failure(lend(s, "lend-refused", false));
    assert.match(String(cause?.message), /no room on another node for replica m-old-0 of m; lend with --force to stop it/);
    assert.deepEqual(s.fleet.versions(), ["v1"], "the replica still serves");
    assert.deepEqual(s.cordon, [true, false]);
    assert.ok(!s.names().includes("slurmResume"));
  });

  it("with --force, stops a replica that has no room elsewhere", async () => {
    const s = lendStandIns({ room: false });
    const p = await lend(s, "lend-forced", true);
    assert.equal(p.phase, "done");
    assert.deepEqual(s.fleet.versions(), []);
    assert.ok(!s.names().includes("startReplica"));
  });

  it("a Slurm that does not answer: the lend fails and the node is llmgw's again", async () => {
    const s = lendStandIns({ room: true, resume: view({ available: false, error: "scontrol: connection refused" }) });
    const cause = await failure(lend(s, "lend-no-slurm", false));
    assert.match(String(cause?.message), /Slurm does not answer for node n1: scontrol: connection refused/);
    assert.deepEqual(s.cordon, [true, false]);
  });

  it("leaves an administrator's drain as it is, and says so", async () => {
    const s = lendStandIns({ room: true, usable: view({ state: "IDLE+DRAIN", drained: true, reason: "disk check" }) });
    const p = await lend(s, "lend-admin-drain", false);
    assert.match(p.message, /an administrator's drain holds it in Slurm \(disk check\)/);
  });
});

/** Slurm's drain answering `drain`, the wait for jobs answering `ends` in turn. */
function reclaimStandIns(drain: SlurmView, ends: { ended: boolean; reason: "idle" | "deadline" | "unreachable"; jobs: number }[]) {
  const cordon: boolean[] = [];
  let n = 0;
  const r = recorded({
    setCordon: async (i: { nodeId: string; cordoned: boolean }) => void cordon.push(i.cordoned),
    slurmDrain: async () => drain,
    waitSlurmJobsEnd: async () => ends[n++]!,
    slurmRequeue: async () => view({ state: "DRAINING", jobs: [] }),
    slurmDescribe: async () => view({ state: "DRAINED", drained: true, drainedByLlmgw: true }),
  });
  return { cordon, ...r };
}
const job = { id: "7", name: "train", state: "RUNNING", user: "ann" };

async function reclaim(s: ReturnType<typeof reclaimStandIns>, id: string, deadlineMs: number | null) {
  return t.run(s.activities, async (taskQueue) => {
    const handle = await t.client.workflow.start("slurmReclaim", { taskQueue, workflowId: id, args: [{ nodeId: "n1", deadlineMs }] });
    const p = (await handle.result()) as SlurmProgress;
    return { p, startedAt: (await handle.describe()).startTime.getTime() };
  });
}
const untils = (calls: { name: string; input: unknown }[]) => calls.filter((c) => c.name === "waitSlurmJobsEnd").map((c) => (c.input as { untilMs: number | null }).untilMs);

describe("slurm reclaim", () => {
  it("waits for the jobs until the deadline, then requeues them and returns the node", async () => {
    const s = reclaimStandIns(view({ state: "DRAINING", jobs: [job] }), [{ ended: false, reason: "deadline", jobs: 1 }, { ended: true, reason: "idle", jobs: 0 }]);
    const { p, startedAt } = await reclaim(s, "reclaim-deadline", 30 * 60_000);
    assert.equal(p.phase, "done");
    assert.equal(p.message, "returned to llmgw");
    assert.deepEqual(s.names(), ["setCordon", "slurmDrain", "waitSlurmJobsEnd", "slurmRequeue", "waitSlurmJobsEnd", "setCordon", "slurmDescribe"]);
    assert.deepEqual(s.cordon, [true, false]);
    // The deadline counts from the reclaim's start on the workflow's clock; after the requeue the
    // jobs get Slurm's two minutes more to leave.
    const [until, afterRequeue] = untils(s.calls) as [number, number];
    assert.ok(until >= startedAt + 30 * 60_000 && until < startedAt + 31 * 60_000, `deadline ${until - startedAt} ms after the start`);
    assert.ok(afterRequeue >= startedAt + 120_000 && afterRequeue < until, "the requeue's own bound");
  });

  it("without a deadline waits however long, and requeues nothing", async () => {
    const s = reclaimStandIns(view({ state: "DRAINING", jobs: [job] }), [{ ended: true, reason: "idle", jobs: 0 }]);
    const { p } = await reclaim(s, "reclaim-no-deadline", null);
    assert.equal(p.phase, "done");
    assert.deepEqual(untils(s.calls), [null]);
    assert.ok(!s.names().includes("slurmRequeue"));
  });

  it("a Slurm that does not answer does not keep the node", async () => {
    const s = reclaimStandIns(view({ available: false, error: "scontrol: timed out" }), []);
    const { p } = await reclaim(s, "reclaim-no-slurm", 60_000);
    assert.equal(p.phase, "done");
    assert.equal(p.message, "Slurm does not answer (scontrol: timed out): the node returns to llmgw regardless");
    assert.deepEqual(s.names(), ["setCordon", "slurmDrain", "setCordon", "slurmDescribe"]);
    assert.deepEqual(s.cordon, [true, false]);
  });

  it("a Slurm that stops answering mid-wait: the node returns regardless", async () => {
    const s = reclaimStandIns(view({ state: "DRAINING", jobs: [job] }), [{ ended: true, reason: "unreachable", jobs: 1 }]);
    const { p } = await reclaim(s, "reclaim-lost-slurm", 60_000);
    assert.equal(p.message, "Slurm stopped answering: the node returns to llmgw regardless");
    assert.deepEqual(s.cordon, [true, false]);
  });
});
