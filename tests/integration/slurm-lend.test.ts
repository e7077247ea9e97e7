// Lending a node to a real one-node Slurm (scripts/slurm.sh): its replica refused without room
// elsewhere, stopped with --force, the node resumed in Slurm and an sbatch job run on it; a replica
// moved to another node first when there is room; a worker
// killed mid-lend and the lend still finishing; an administrator's drain never lifted; the web
// console's Lend (asked first) and Reclaim buttons, in Chromium.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startChild, stopChild, waitFor } from "../../common/children.ts";
import { engineAuth } from "../../common/engine-key.ts";
import { launchBrowser } from "../helpers/browser.ts";
import { makePerson, openTab, sentRequests } from "../helpers/console-browser.ts";
import { freePort, uniqueModel, type Platform } from "../helpers/platform.ts";
import { HOST, JOB_NAME, nodeState, setDrain, sh, startSlurmPlatform, tmpDir, type SlurmOp } from "../helpers/slurm.ts";

type Op = SlurmOp;
interface Status {
  enabled: boolean;
  data: { id: string; llmgw: string; cordoned: boolean; slurm: { state: string; reason: string } | null; jobs: unknown[] }[];
}

describe("slurm lend", () => {
  let p: Platform;
  const dir = tmpDir();

  before(async () => {
    p = await startSlurmPlatform();
  });
  after(async () => {
    await p?.stop();
    setDrain("llmgw: not lent");
  });

  const ctlOk = async (args: string[]) => {
    const r = await p.ctl(args);
    assert.equal(r.code, 0, `ctl ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  const serveOne = (model: string, extra: string[] = []) => ctlOk(["model", "serve", model, "--engine", "sim", "--replicas", "1", ...extra, "--wait"]);
  const node = async () => (await p.admin<Status>("GET", "/slurm")).data.find((n) => n.id === HOST)!;
  const finished = (id: string) =>
    waitFor(`${id} to end`, async () => {
      const op = await p.admin<Op>("GET", `/operations/${id}`);
      return op.status !== "RUNNING" ? op : null;
    }, 180_000, 250);

  it("refuses to lend a node whose replica has no room elsewhere, and leaves it serving", async () => {
    const model = uniqueModel("lend");
    await serveOne(model);
    const r = await p.ctl(["slurm", "lend", HOST, "--wait"]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /no room on another node.*--force/);
    const n = await node();
    assert.equal(n.cordoned, false, "uncordoned again: the node stays llmgw's");
    assert.equal(p.enginePids(model).length, 1, "its replica still runs");
    assert.equal(nodeState().state, "drained");
  });

  it("lends with --force: replicas stopped, the node resumed in Slurm, and a batch job runs on it", async () => {
    const out = JSON.parse(await ctlOk(["slurm", "lend", HOST, "--force", "--wait", "--json"])) as Op;
    assert.equal(out.status, "COMPLETED");
    const models = await p.admin<{ data: { replicas: unknown[] }[] }>("GET", "/models");
    assert.equal(models.data.flatMap((m) => m.replicas).length, 0, "no replica left on the lent node");
    assert.equal(nodeState().state, "idle");
    const n = await waitFor("the heartbeat to carry Slurm's idle state", async () => {
      const x = await node();
      return x.slurm?.state === "idle" ? x : null;
    });
    assert.equal(n.llmgw, "lent");
    assert.equal(n.cordoned, true, "cordoned in llmgw while lent");

    const file = path.join(dir, "job.out");
    const id = sh("sbatch", ["--parsable", "--wait", "-J", JOB_NAME, "-w", HOST, "-o", file, "--wrap", "hostname -s"], 120_000).trim();
    assert.match(id, /^\d+/);
    assert.equal(fs.readFileSync(file, "utf8").trim(), HOST, "the job ran on the lent node");
  });

  it("a worker killed mid-lend: the lend still finishes", async () => {
    const back = JSON.parse(await ctlOk(["slurm", "reclaim", HOST, "--wait", "--json"])) as Op;
    assert.equal(back.status, "COMPLETED");
    // A replica busy with a slow request holds the lend in its drain step while the worker dies.
    const model = uniqueModel("lendkill");
    await serveOne(model, ["--arg=--tokens-per-second", "--arg=4"]);
    const { data } = await p.admin<{ data: { name: string; replicas: { id: string; url: string }[] }[] }>("GET", "/models");
    const replica = data.find((m) => m.name === model)!.replicas[0]!;
    const slow = fetch(`${replica.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...engineAuth(p.env.LLMGW_CLUSTER_TOKEN!, replica.id) },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 40 }),
    }).then((r) => r.text());

    const { operationId } = await p.admin<{ operationId: string }>("POST", `/slurm/nodes/${HOST}/lend`, { force: true });
    await waitFor("the lend to be moving replicas", async () => (await p.admin<Op>("GET", `/operations/${operationId}`)).progress?.phase === "moving-replicas", 60_000, 100);
    await p.kill("worker-temporal", "SIGKILL");
    await p.start("worker-temporal");

    const op = await finished(operationId);
    assert.equal(op.status, "COMPLETED", op.error ?? "");
    assert.equal(op.progress?.phase, "done");
    assert.equal(p.enginePids(model).length, 0, "the replica was stopped");
    assert.equal(nodeState().state, "idle", "resumed in Slurm");
    await slow;
  });

  it("never lifts a drain an administrator set", async () => {
    const back = JSON.parse(await ctlOk(["slurm", "reclaim", HOST, "--wait", "--json"])) as Op;
    assert.equal(back.status, "COMPLETED");
    setDrain("disk swap by the admin");
    const lent = JSON.parse(await ctlOk(["slurm", "lend", HOST, "--wait", "--json"])) as Op;
    assert.equal(lent.status, "COMPLETED");
    assert.match(lent.progress?.message ?? "", /administrator's drain/);
    assert.deepEqual(nodeState(), { state: "drained", reason: "disk swap by the admin" });

    const again = JSON.parse(await ctlOk(["slurm", "reclaim", HOST, "--wait", "--json"])) as Op;
    assert.equal(again.status, "COMPLETED");
    assert.deepEqual(nodeState(), { state: "drained", reason: "disk swap by the admin" }, "reclaim keeps the administrator's reason");
    assert.equal((await node()).cordoned, false);
    setDrain("llmgw: not lent"); // as the administrator would, back to llmgw's own drain
  });

  it("the console's Slurm section lends (asked first) and reclaims the node, each followed to its end", { timeout: 300_000 }, async (t) => {
    const admin = await makePerson(p.env.DATABASE_URL!, process.env.REDIS_URL ?? "redis://127.0.0.1:6379/1", "Sam Slurm", [{ role: "platform-admin", scope: "platform" }]);
    const browser = await launchBrowser();
    t.after(() => browser.close());
    const tab = await openTab(browser, p.clientUrl, admin);
    await tab.page.goto(`${p.clientUrl}/console/nodes`);
    const row = tab.page.getByRole("table", { name: "Slurm", exact: true }).getByRole("row").filter({ hasText: HOST });
    await row.filter({ hasText: "llmgw: not lent" }).waitFor();
    const lends = sentRequests(tab.page, "POST", `/slurm/nodes/${HOST}/lend`);
    tab.page.once("dialog", (d) => void d.dismiss());
    await tab.page.getByRole("button", { name: `Lend ${HOST}` }).click();
    tab.page.once("dialog", (d) => void d.accept());
    await tab.page.getByRole("button", { name: `Lend ${HOST}` }).click();
    const done = (what: string) => tab.page.locator("li.operation").filter({ hasText: what }).locator('[data-status="COMPLETED"]').waitFor({ timeout: 180_000 });
    await done(`Lend ${HOST}`);
    assert.equal(lends.length, 1, "the dismissed question sent nothing, the accepted one the lend");
    assert.equal(nodeState().state, "idle", "resumed in Slurm");
    await row.filter({ hasText: "lent" }).filter({ hasText: "idle" }).waitFor({ timeout: 30_000 });
    await tab.page.getByRole("button", { name: `Reclaim ${HOST}` }).click();
    await done(`Reclaim ${HOST}`);
    assert.deepEqual(nodeState(), { state: "drained", reason: "llmgw: reclaim" }, "drained in Slurm again, by llmgw");
    assert.equal((await node()).cordoned, false, "llmgw's again");
    assert.deepEqual(tab.errors, [], "no console error");
  });

  // Last: the second node stays in the store after its agent stops.
  it("moves a replica to another node first when there is room, then lends", async (t) => {
    await ctlOk(["slurm", "reclaim", HOST, "--wait"]);
    const model = uniqueModel("lendmove");
    await serveOne(model);
    const other = `node-b-${p.id}`;
    const env = { ...p.env, LLMGW_NODE_ID: other, LLMGW_AGENT_PORT: String(await freePort()), LLMGW_SLURM_ENABLED: "0", LLMGW_ENGINE_PORT_MIN: "29800", LLMGW_ENGINE_PORT_MAX: "29899" };
    const second = startChild("agent-b", ["agent"], { env, logDir: path.join(p.dataDir, "logs") });
    t.after(() => stopChild(second));
    await waitFor("the second agent to register", async () => (await p.admin<Status>("GET", "/slurm")).data.some((n) => n.id === other), 60_000);

    const out = JSON.parse(await ctlOk(["slurm", "lend", HOST, "--wait", "--json"])) as Op;
    assert.equal(out.status, "COMPLETED");
    const { data } = await p.admin<{ data: { name: string; replicas: { node: string; state: string }[] }[] }>("GET", "/models");
    assert.deepEqual(data.find((m) => m.name === model)!.replicas.map((r) => [r.node, r.state]), [[other, "ready"]], "served on the other node, never fewer");
    assert.equal(nodeState().state, "idle");
    await p.ctl(["model", "serve", model, "--engine", "sim", "--replicas", "0", "--wait"]);
  });
});
