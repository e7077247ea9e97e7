// Jobs in GPU-seconds (docs/people.md): a picture made with a person's own key on a ComfyUI replica
// of two GPUs is charged the two GPUs × the prompt's run on the engine; its row names the person,
// `ctl usage --by person --gpu-seconds` counts it, and a GPU-hour budget on the key stops the next job
// with the budget's 429. Training's charge is shown in tests/integration/training.test.ts.
//
// The stand-in ComfyUI is placed on no GPU here, so its placement is given two GPUs in the store, as
// placement writes it; the job's activity reads the replica's GPUs when it runs the prompt.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { waitFor } from "../../common/children.ts";
import { closePrisma, prisma, type PrismaClient } from "../../common/db.ts";
import { redis as redisClient } from "../../common/redis.ts";
import { SessionStore } from "../../gateway/people/sessions.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

const GPUS = 2;

describe("jobs in GPU-seconds", () => {
  let p: Platform;
  let db: PrismaClient;
  const model = uniqueModel("e2e-jobgpu");
  const project = `jobgpu-${model.slice(-6)}`;
  let person: string;
  let email: string;
  let key: { id: string; key: string };

  before(async () => {
    p = await startPlatform();
    db = prisma(p.env.DATABASE_URL);
    await p.serve(model, { engine: "comfyui", args: ["--llmgw-standin", "--step-ms=50"] });
    await db.replica.updateMany({ where: { modelName: model }, data: { gpus: Array.from({ length: GPUS }, (_, i) => i) } });
    await p.newKey({ project });
    const proj = await db.project.findUniqueOrThrow({ where: { name: project } });
    email = `ada-${randomUUID()}@example.test`;
    person = (await db.person.create({ data: { id: randomUUID(), name: "Ada", email } })).id;
    await db.membership.create({ data: { id: randomUUID(), personId: person, scope: "project", scopeId: proj.id, role: "member" } });
    const r = redisClient(p.env.REDIS_URL);
    const session = (await new SessionStore(r).create(person, "test")).token;
    r.disconnect();
    const made = await fetch(`${p.clientUrl}/api/v1/me/keys`, { method: "POST", headers: { authorization: `Bearer ${session}`, "content-type": "application/json" }, body: JSON.stringify({ project, name: "pictures" }) });
    assert.equal(made.status, 201, await made.clone().text());
    key = (await made.json()) as { id: string; key: string };
  });
  after(async () => {
    await closePrisma();
    await p?.stop();
  });

  const picture = () =>
    fetch(`${p.clientUrl}/v1/images/generations`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model, prompt: "a lighthouse", size: "64x64", response_format: "b64_json" }),
    });

  it("charges the replica's GPUs × the prompt's run, names the person, and reports it by person", async () => {
    const res = await picture();
    assert.equal(res.status, 200, await res.text());
    const row = await waitFor("the job's usage row", () => db.usageEvent.findFirst({ where: { keyId: key.id, endpoint: "/v1/images/generations" } }), 30_000, 200);
    const job = await db.job.findUniqueOrThrow({ where: { id: row.id.replace(/^job-/, "") } });
    const run = Number((job.progress as { run_seconds?: number }).run_seconds);
    assert.ok(run > 0, `the job's run on the engine: ${JSON.stringify(job.progress)}`);
    // run_seconds is shown rounded to a tenth.
    assert.ok(Math.abs(row.gpuSeconds - GPUS * run) <= GPUS * 0.05 + 1e-9, `${row.gpuSeconds} GPU-seconds is ${GPUS} GPUs × ${run} s`);
    assert.equal(row.personId, person, "the row names the key's person");

    const out = await p.ctl(["usage", "--by", "person", "--gpu-seconds", "--json"]);
    assert.equal(out.code, 0, out.stderr);
    const mine = (JSON.parse(out.stdout) as { person: string; gpuSeconds: number }[]).find((r) => r.person === email);
    assert.ok(mine && Math.abs(mine.gpuSeconds - row.gpuSeconds) < 1e-6, `the person's GPU-seconds in the report: ${out.stdout}`);
  });

  it("a job cancelled while it runs is charged the GPU time its prompt ran, at no money cost", async () => {
    const leave = new AbortController();
    const asked = fetch(`${p.clientUrl}/v1/images/generations`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model, prompt: "a long one", size: "64x64", steps: 100 }), // 100 steps of 50 ms
      signal: leave.signal,
    }).catch(() => null);
    const job = await waitFor("the job to run", () => db.job.findFirst({ where: { model, state: "running", input: { path: ["prompt"], equals: "a long one" } } }), 30_000, 100);
    await new Promise((r) => setTimeout(r, 1000));
    leave.abort(); // the client leaves: the job is cancelled, its prompt interrupted
    await asked;
    const row = await waitFor("the cancelled job's usage row", () => db.usageEvent.findUnique({ where: { id: `job-${job.id}` } }), 30_000, 200);
    assert.equal(row.status, 499);
    assert.equal(row.costMicros, 0n);
    assert.ok(row.gpuSeconds >= GPUS * 0.5 && row.gpuSeconds < GPUS * 5, `${row.gpuSeconds} GPU-seconds: ${GPUS} GPUs × about a second of a 5 s run`);
    assert.equal((await db.job.findUniqueOrThrow({ where: { id: job.id } })).state, "cancelled");
  });

  it("a GPU-hour budget on the key counts its jobs and stops the next one with the budget's 429", async () => {
    // 0.036 GPU-seconds: less than the picture above cost.
    const set = await p.ctl(["limits", "set", "key", key.id, "--budget-gpu-hours", "0.00001"]);
    assert.equal(set.code, 0, set.stderr);
    const refused = await waitFor("the key refused", async () => {
      const r = await picture();
      const text = await r.text();
      return r.status === 429 ? text : null;
    }, 30_000, 300);
    const body = JSON.parse(refused) as { error: { code: string; message: string } };
    assert.equal(body.error.code, "budget_exceeded");
    assert.match(body.error.message, /monthly GPU budget is spent/);
    const cleared = await p.ctl(["limits", "set", "key", key.id, "--budget-gpu-hours", "none"]);
    assert.equal(cleared.code, 0, cleared.stderr);
  });

  it("a malformed job request counts against nothing: the key's requests per minute are its admitted jobs", async () => {
    const k = await p.newKey({ project });
    const set = await p.ctl(["limits", "set", "key", k.id, "--rpm", "2"]);
    assert.equal(set.code, 0, set.stderr);
    const post = (route: string, body: unknown, bearer = k.key) => fetch(`${p.clientUrl}/v1/${route}`, { method: "POST", headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const ok = { model, prompt: "a lighthouse", size: "64x64", response_format: "b64_json" };
    // The gateway reloads limits all at once: a probe key's limit set after k's, once it holds, says k's is loaded.
    const probe = await p.newKey({ project });
    assert.equal((await p.ctl(["limits", "set", "key", probe.id, "--rpm", "1"])).code, 0);
    await waitFor("the gateway to load the limits", async () => (await post("images/generations", ok, probe.key).then(async (r) => (await r.arrayBuffer(), r.status))) === 429, 30_000, 200);
    const malformed: [string, unknown][] = [
      ["images/generations", { model, prompt: "x", size: "big" }],
      ["images/generations", { model: "no-such-comfy-model", prompt: "x" }],
      ["images/generations", { prompt: "x" }],
      ["3d/generations", { model, image: "bm90IGEgcGljdHVyZQ==" }],
      ["3d/generations", { model, file_id: "file-none" }],
      ["workflows/runs", { model: "no-such-workflow", inputs: {} }],
    ];
    for (const [route, body] of malformed) {
      const r = await post(route, body);
      assert.ok(r.status === 400 || r.status === 404, `${route} ${JSON.stringify(body)}: ${r.status} ${await r.text()}`);
    }
    for (let i = 0; i < 2; i++) {
      const r = await post("images/generations", ok);
      assert.equal(r.status, 200, `admitted job ${i + 1} of 2: ${await r.text()}`);
    }
    const third = await post("images/generations", ok);
    assert.equal(third.status, 429, "the limit holds for admitted jobs");
    assert.equal(((await third.json()) as { error: { code: string } }).error.code, "rate_limit_exceeded");
  });
});
