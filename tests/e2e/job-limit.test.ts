// The cluster's job limit (LLMGW_JOBS_MAX=1 here) across models: a job of one model waits while
// another model's job runs, and says so: waiting_gpu, held by that job, with an estimate of the
// seconds left from the holder's steps. Its slot is a lease in Redis, given back when the job ends.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { prisma, type PrismaClient } from "../../common/db.ts";
import { engineAuth } from "../../common/engine-key.ts";
import { encodeRgb } from "../../common/png.ts";
import { redis } from "../../common/redis.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

type JobView = { id: string; status: string; progress: Record<string, unknown> };
const PICTURE = encodeRgb(16, 16, (x, y) => [x * 16, y * 16, 0]).toString("base64");

describe("at most LLMGW_JOBS_MAX jobs at once in the cluster", () => {
  let p: Platform;
  let key: string;
  let db: PrismaClient;
  const a = uniqueModel("lim-a");
  const b = uniqueModel("lim-b");

  const api = async <T,>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${p.clientUrl}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await res.json()) as T;
  };
  const poll = async (id: string, until: (j: JobView) => boolean): Promise<JobView> => {
    let job: JobView | undefined;
    for (let i = 0; i < 600; i++) {
      job = await api<JobView>("GET", `/3d/generations/${id}`);
      if (until(job)) return job;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${id} never reached the awaited state; last ${JSON.stringify(job)}`);
  };
  const standinLog = async (model: string) => {
    const r = await db.replica.findFirstOrThrow({ where: { modelName: model, state: "ready" } });
    const res = await fetch(`${r.url}/standin/log`, { headers: engineAuth(p.env.LLMGW_CLUSTER_TOKEN!, r.id) });
    return (await res.json()) as { events: { kind: string; prompt_id: string; at: number }[] };
  };

  before(async () => {
    p = await startPlatform({ env: { LLMGW_JOBS_MAX: "1" } });
    db = prisma(p.env.DATABASE_URL);
    key = (await p.newKey()).key;
    for (const m of [a, b]) await p.serve(m, { engine: "comfyui", args: ["--llmgw-standin", "--step-ms=20"] });
  });

  after(async () => {
    await db?.$disconnect();
    await p?.stop();
  });

  it("holds another model's job as waiting_gpu, held by the running job, with seconds left; runs it after", async () => {
    const first = await api<JobView>("POST", "/3d/generations", { model: a, image: PICTURE, resolution: 64, steps: 300 });
    await poll(first.id, (j) => j.status === "running" && Number(j.progress.step) > 0);
    const second = await api<JobView>("POST", "/3d/generations", { model: b, image: PICTURE, resolution: 64, steps: 5 });
    const waiting = await poll(second.id, (j) => j.status === "waiting_gpu" || j.status === "completed");
    assert.equal(waiting.status, "waiting_gpu", "b's job waits though b's card is free");
    assert.equal(waiting.progress.held_by, first.id);
    assert.equal(typeof waiting.progress.eta_seconds, "number", JSON.stringify(waiting.progress));
    assert.ok((waiting.progress.eta_seconds as number) > 0, JSON.stringify(waiting.progress));

    for (const id of [first.id, second.id]) assert.equal((await poll(id, (j) => ["completed", "failed", "cancelled"].includes(j.status))).status, "completed");
    const done = (await standinLog(a)).events.find((e) => e.kind === "done" && e.prompt_id === first.id)!.at;
    const started = (await standinLog(b)).events.find((e) => e.kind === "start" && e.prompt_id === second.id)!.at;
    assert.ok(started >= done, "b's job started on its engine after a's finished");

    const r = redis(p.env.REDIS_URL);
    try {
      assert.deepEqual(await r.zrange(`llmgw:job-slots:${p.env.LLMGW_TASK_QUEUE}`, 0, -1), [], "both leases were given back");
    } finally {
      r.disconnect();
    }
  });
});
