// The serve workflow survives its worker being killed mid-way: while it waits for a slow engine to
// load, the worker is SIGKILLed and another started; the model still becomes ready with exactly
// the wanted number of engine processes — none leaked, none doubled.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { waitFor } from "../../common/children.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

interface Op {
  status: string;
  progress: { phase: string; ready: number; wanted: number } | null;
}

let p: Platform;
before(async () => {
  p = await startPlatform();
});
after(async () => {
  await p?.stop();
});

it("finishes serving with exactly N engines after its worker is killed while it waits for them", async () => {
  const model = uniqueModel("durable");
  const replicas = 2;
  // Engines take 8 s to load, so the workflow is surely waiting when the worker dies.
  const { operationId } = await p.admin<{ operationId: string }>("POST", `/models/${model}/serve`, {
    engine: "sim",
    replicas,
    args: ["--load-delay-ms", "8000"],
  });
  await waitFor("the workflow to wait for the engines", async () => {
    const op = await p.admin<Op>("GET", `/operations/${operationId}`);
    return op.progress?.phase === "waiting-ready" && p.enginePids(model).length === replicas;
  }, 60_000, 100);

  await p.kill("worker-temporal", "SIGKILL");
  const before = p.enginePids(model).sort();
  await new Promise((r) => setTimeout(r, 1000));
  await p.start("worker-temporal");

  const done = await waitFor("the serve operation to complete", async () => {
    const op = await p.admin<Op>("GET", `/operations/${operationId}`);
    if (op.status === "FAILED") throw new Error("serve failed");
    return op.status === "COMPLETED" ? op : null;
  }, 120_000, 250);
  assert.equal(done.progress?.ready, replicas);

  const after = p.enginePids(model).sort();
  assert.equal(after.length, replicas, "exactly N engine processes");
  assert.deepEqual(after, before, "the engines started before the crash are the ones serving: none restarted, none doubled");
  const models = await p.admin<{ data: { name: string; ready: number; replicas: unknown[] }[] }>("GET", "/models");
  const m = models.data.find((x) => x.name === model)!;
  assert.equal(m.ready, replicas);
  assert.equal(m.replicas.length, replicas, "no stray replica record");
});

it("a second serve of the same model with fewer replicas stops the surplus, newest state wins", async () => {
  const model = uniqueModel("scale");
  const serve = async (n: number) => {
    const { operationId } = await p.admin<{ operationId: string }>("POST", `/models/${model}/serve`, { engine: "sim", replicas: n });
    return waitFor(`serve ×${n}`, async () => {
      const op = await p.admin<Op>("GET", `/operations/${operationId}`);
      if (op.status === "FAILED") throw new Error("serve failed");
      return op.status === "COMPLETED";
    }, 120_000, 250);
  };
  await serve(3);
  assert.equal(p.enginePids(model).length, 3);
  await serve(1);
  await waitFor("surplus engines to exit", async () => p.enginePids(model).length === 1, 20_000);
});
