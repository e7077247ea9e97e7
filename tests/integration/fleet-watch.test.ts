// Nodes and engines failing, and nodes drained, on a fleet of two agents: a dead engine is
// replaced, a drained node's replicas move first and then stop, a lost node's replicas are placed
// elsewhere, and raises one node_lost notification. Each time the number of engines equals what is
// wanted.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { waitFor } from "../../common/children.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

interface ModelView {
  replicas: { id: string; node: string; state: string }[];
  state: { parked?: string | null } | null;
}

describe("fleet watch, drain and lost nodes", () => {
  let p: Platform;
  let nodeA: string;
  const nodeB = `b-${Math.random().toString(16).slice(2, 8)}`;
  const model = uniqueModel("fleet");
  const view = () => p.admin<ModelView>("GET", `/models/${model}`);
  const readyOn = async () => (await view()).replicas.filter((r) => r.state === "ready").map((r) => r.node).sort();

  before(async () => {
    p = await startPlatform({ env: { LLMGW_NODE_LOST_MS: "4000", LLMGW_FLEET_WATCH_MS: "500" } });
    nodeA = p.env.LLMGW_NODE_ID!;
    await p.addAgent(nodeB);
    const served = await p.ctl(["model", "serve", model, "--engine", "sim", "--replicas", "2", "--wait"]);
    assert.equal(served.code, 0, `${served.stderr}\n${p.logTails()}`);
  });
  after(async () => {
    await p?.stop();
  });

  it("spreads the two replicas over both nodes", async () => {
    assert.deepEqual(await readyOn(), [nodeA, nodeB].sort());
  });

  it("replaces a replica whose engine died", async () => {
    const [victim] = p.enginePids(model, nodeA);
    assert.ok(victim);
    process.kill(victim, "SIGKILL");
    await waitFor("a replacement", async () => {
      const pids = p.enginePids(model);
      return pids.length === 2 && !pids.includes(victim) && (await readyOn()).length === 2;
    }, 60_000);
  });

  it("drains a node: its replicas move to the other node first, then stop", async () => {
    const r = await p.ctl(["node", "drain", nodeB, "--wait", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await readyOn(), [nodeA, nodeA]);
    assert.equal(p.enginePids(model, nodeB).length, 0);
    assert.equal(p.enginePids(model, nodeA).length, 2);
    const nodes = JSON.parse((await p.ctl(["nodes", "--json"])).stdout) as { id: string; cordoned: boolean }[];
    assert.equal(nodes.find((n) => n.id === nodeB)?.cordoned, true);
  });

  it("places a lost node's replicas elsewhere", async () => {
    assert.equal((await p.ctl(["node", "uncordon", nodeB])).code, 0);
    assert.equal((await p.ctl(["model", "scale", model, "--replicas", "3", "--wait"])).code, 0);
    assert.deepEqual(await readyOn(), [nodeA, nodeA, nodeB].sort());
    // The machine dies: its agent and its engines at once.
    const enginesOnB = p.enginePids(model, nodeB);
    await p.kill(`agent-${nodeB}`, "SIGKILL");
    for (const pid of enginesOnB) process.kill(pid, "SIGKILL");
    await waitFor("the lost node's replica on the other node", async () => {
      const on = await readyOn();
      return on.length === 3 && on.every((n) => n === nodeA) ? on : null;
    }, 90_000);
    assert.equal(p.enginePids(model, nodeA).length, 3);
    assert.ok(!(await view()).state?.parked);
    // The fleet watch found the node lost on each look until its replica moved: one notification.
    const listed = await p.ctl(["notify", "list", "--json"]);
    assert.equal(listed.code, 0, listed.stderr);
    const lost = (JSON.parse(listed.stdout) as { kind: string; subject: string; details: { models?: string[] } }[]).filter((n) => n.kind === "node_lost" && n.subject === nodeB);
    assert.equal(lost.length, 1, listed.stdout);
    assert.deepEqual(lost[0]!.details.models, [model]);
  });
});
