// Pictures, meshes and ComfyUI workflows as jobs, end to end: ctl serves two ComfyUI models (the
// stand-in engine, started by the agent as ComfyUI would be), clients use /v1/images (the official
// openai client), /v1/3d, /v1/workflows/runs and /v1/files; the stand-in tells what it was asked.
// Catalog workflows come in through `ctl workflow` (the admin API); the engine is reached through its
// key-checking gate with the replica's key.
import assert from "node:assert/strict";
import fs from "node:fs";
import nodePath from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI, { toFile } from "openai";
import { prisma, type PrismaClient } from "../../common/db.ts";
import { engineAuth } from "../../common/engine-key.ts";
import { parseGlb } from "../../common/glb.ts";
import { pngSize, readChunks, textEntries } from "../../common/png.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";
import { MP4, PICTURE, WAV, allInputsWorkflow, malformedJobRequests } from "../fixtures/comfy-jobs.ts";

type JobView = { id: string; status: string; progress: Record<string, unknown>; result: { file_id: string; files: { id: string }[] } | null; error: { message: string } | null };
type StandinLog = { events: { kind: string; prompt_id: string | null; at: number }[]; runs: Record<string, number> };

describe("pictures, meshes and ComfyUI workflows as jobs", () => {
  let p: Platform;
  let key: string;
  let db: PrismaClient;
  let client: OpenAI;
  const a = uniqueModel("comfy-a");
  const b = uniqueModel("comfy-b");
  const allInputs = uniqueModel("wf-all");
  const urls: Record<string, string> = {};
  const replicaIds: Record<string, string> = {};
  /** Straight to a model's ComfyUI, through its gate with the replica's key. */
  const comfy = (model: string, path: string, init: RequestInit = {}) =>
    fetch(`${urls[model]}${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), ...engineAuth(p.env.LLMGW_CLUSTER_TOKEN!, replicaIds[model]!) } });

  const api = async <T,>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${p.clientUrl}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as T };
  };
  const standinLog = async (model: string) => (await (await comfy(model, "/standin/log")).json()) as StandinLog;
  /** Polls a job until `until` says so (bounded), returning every status seen on the way. */
  const poll = async (path: string, until: (j: JobView) => boolean): Promise<{ job: JobView; seen: Set<string> }> => {
    const seen = new Set<string>();
    for (let i = 0; i < 600; i++) {
      const { body: job } = await api<JobView>("GET", path);
      seen.add(job.status);
      if (until(job)) return { job, seen };
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${path} never reached the awaited state; saw ${[...seen].join(", ")}`);
  };
  const upload = async (bytes: Buffer, name: string) => (await client.files.create({ file: await toFile(bytes, name), purpose: "vision" })).id;
  const mesh = async (body: Record<string, unknown>) => {
    const r = await api<JobView>("POST", "/3d/generations", { model: a, ...body });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    return r.body;
  };

  before(async () => {
    p = await startPlatform();
    db = prisma(p.env.DATABASE_URL);
    key = (await p.newKey({ project: "pix" })).key;
    for (const m of [a, b]) {
      await p.serve(m, { engine: "comfyui", args: ["--llmgw-standin", "--step-ms=20"] });
      const r = await db.replica.findFirstOrThrow({ where: { modelName: m, state: "ready" } });
      urls[m] = r.url;
      replicaIds[m] = r.id;
    }
    await db.model.update({ where: { name: a }, data: { licence: "CreativeML Open RAIL++-M" } });
    assert.equal((await p.ctl(["prices", "set", a, "--picture", "0.02", "--mesh", "0.5"])).code, 0);
    const file = nodePath.join(p.dataDir, "wf-all.json");
    fs.writeFileSync(file, JSON.stringify(allInputsWorkflow(allInputs, a)));
    const added = await p.ctl(["workflow", "add", "-f", file, "--json"]);
    assert.equal(added.code, 0, added.stderr);
    assert.deepEqual(JSON.parse(added.stdout), { name: allInputs, created: true });
    client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key });
  });

  after(async () => {
    await db?.$disconnect();
    await p?.stop();
  });

  it("makes pictures through the official openai client (b64_json and url), licence in, workflow out, priced", async () => {
    const r = await client.images.generate({ model: a, prompt: "a lighthouse", n: 2, size: "64x64", response_format: "b64_json" });
    assert.equal(r.data?.length, 2);
    for (const d of r.data!) {
      const png = Buffer.from(d.b64_json!, "base64");
      assert.deepEqual(pngSize(png), { width: 64, height: 64 });
      const text = textEntries(png);
      assert.equal(text.licence, "CreativeML Open RAIL++-M");
      assert.equal(text.prompt, undefined, "the workflow's prompt is stripped");
      assert.equal(text.workflow, undefined, "the workflow is stripped");
      assert.ok(readChunks(png).some((c) => c.type === "iTXt"));
    }
    const byUrl = await client.images.generate({ model: a, prompt: "a harbour", size: "64x128", response_format: "url" });
    const res = await fetch(byUrl.data![0]!.url!, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(res.status, 200);
    assert.deepEqual(pngSize(Buffer.from(await res.arrayBuffer())), { width: 64, height: 128 });
    const anon = await fetch(byUrl.data![0]!.url!);
    assert.equal(anon.status, 401);

    let spent = 0n;
    for (let i = 0; i < 100; i++) {
      const rows = await db.usageEvent.findMany({ where: { model: a, endpoint: "/v1/images/generations" } });
      spent = rows.reduce((s, e) => s + e.costMicros, 0n);
      if (rows.length === 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(spent, 3n * 20_000n, "three pictures at 0.02 each");
  });

  it("makes a mesh as a job: 202, polled to completion with progress, GLB downloaded and parsed", async () => {
    const fileId = await upload(PICTURE, "chair.png");
    const job = await mesh({ file_id: fileId, resolution: 128, steps: 40 });
    assert.match(job.id, /^job-/);
    assert.equal(job.status, "queued");
    let percent = -1;
    const { job: done, seen } = await poll(`/3d/generations/${job.id}`, (j) => {
      if (j.status === "running") percent = Math.max(percent, Number(j.progress.percent));
      return j.status === "completed" || j.status === "failed";
    });
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.ok(seen.has("running") && percent > 0, `progress was shown while running (${[...seen].join(",")}, ${percent}%)`);
    assert.ok(Number(done.progress.run_seconds) > 0, `the run time is kept for later estimates: ${JSON.stringify(done.progress)}`);
    const content = await fetch(`${p.clientUrl}/v1/files/${done.result!.file_id}/content`, { headers: { authorization: `Bearer ${key}` } });
    const glb = parseGlb(Buffer.from(await content.arrayBuffer()));
    assert.deepEqual(glb.json.asset.extras, { licence: "CreativeML Open RAIL++-M", model: a });
    assert.ok((glb.json.meshes as unknown[]).length === 1 && glb.bin && glb.bin.length > 0);

    const inline = await mesh({ image: PICTURE.toString("base64"), resolution: 64, steps: 2 });
    assert.equal((await poll(`/3d/generations/${inline.id}`, (j) => j.status === "completed" || j.status === "failed")).job.status, "completed");
  });

  it("runs a catalog workflow with every input type, each put where its placeholder was", async () => {
    const files = {
      picture: await upload(PICTURE, "p.png"),
      matte: await upload(PICTURE, "m.png"),
      voice: await upload(WAV, "v.wav"),
      clip: await upload(MP4, "c.mp4"),
      notes: await upload(Buffer.from("just text"), "n.txt"),
    };
    const r = await api<JobView>("POST", "/workflows/runs", { model: allInputs, inputs: { prompt: "a cat", cfg: 6.5, tiled: true, sampler: "dpmpp_2m", ...files } });
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const { job } = await poll(`/workflows/runs/${r.body.id}`, (j) => j.status === "completed" || j.status === "failed");
    assert.equal(job.status, "completed", JSON.stringify(job));
    const history = (await (await comfy(a, `/history/${job.id}`)).json()) as Record<string, { prompt: [number, string, Record<string, { inputs: Record<string, unknown> }>] }>;
    const graph = history[job.id]!.prompt[2];
    assert.equal(graph["6"]!.inputs.text, "a photo of a cat");
    assert.deepEqual([graph["8"]!.inputs.steps, graph["8"]!.inputs.cfg, graph["8"]!.inputs.tiled, graph["8"]!.inputs.sampler_name], [4, 6.5, true, "dpmpp_2m"]);
    assert.match(String(graph["1"]!.inputs.image), /picture\.png$/);
    assert.match(String(graph["3"]!.inputs.audio), /voice\.wav$/);
    assert.match(String(graph["4"]!.inputs.file), /clip\.mp4$/);
    const listed = await api<{ data: JobView[] }>("GET", "/workflows/runs");
    assert.ok(listed.body.data.some((j) => j.id === job.id));
  });

  it("refuses 30 malformed job requests with a 400 naming the field, before any job exists", async () => {
    const mine = await upload(PICTURE, "ok.png");
    const text = await upload(Buffer.from("not a picture"), "x.txt");
    const wav = await upload(WAV, "x.wav");
    const okInputs = { prompt: "x", cfg: 1, sampler: "euler", picture: mine, matte: mine, voice: wav, clip: await upload(MP4, "x.mp4"), notes: text };
    // A file of another project.
    const otherKey = (await p.newKey({ project: "other" })).key;
    const other = await new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: otherKey }).files.create({ file: await toFile(PICTURE, "o.png"), purpose: "vision" });
    const cases = malformedJobRequests({ model: a, workflowModel: allInputs, okInputs, picture: mine, text, othersFile: other.id });
    assert.equal(cases.length, 30);
    const jobsBefore = await db.job.count();
    for (const [path, body, field] of cases) {
      const r = await api<{ error: { param: string | null; message: string; type: string } }>("POST", path, body);
      assert.equal(r.status, 400, `${path} ${JSON.stringify(body).slice(0, 120)}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error.type, "invalid_request_error");
      if (field) assert.equal(r.body.error.param, field, `${path}: ${r.body.error.message}`);
      else assert.match(r.body.error.message, /colour/);
    }
    assert.equal(await db.job.count(), jobsBefore, "no job was made for a refused request");
  });

  it("cancels a job waiting in ComfyUI's queue (deleted there) and one running (interrupted)", async () => {
    // Another user of the card: a prompt sent straight to ComfyUI holds it.
    const blocker = await comfy(a, "/prompt", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ prompt: { "1": { class_type: "KSampler", inputs: { steps: 100000 } }, "2": { class_type: "SaveImage", inputs: {} } } }),
    });
    const blockerId = ((await blocker.json()) as { prompt_id: string }).prompt_id;
    const waiting = await mesh({ image: PICTURE.toString("base64"), resolution: 64, steps: 5 });
    const { job: w } = await poll(`/3d/generations/${waiting.id}`, (j) => j.status === "waiting_gpu" && j.progress.engine_queue_ahead !== undefined);
    assert.match(String(w.progress.held_by), new RegExp(blockerId));
    // Nothing is known of a stranger's prompt but that it runs: the estimate is the model's recent run time.
    assert.equal(typeof w.progress.eta_seconds, "number", JSON.stringify(w.progress));
    await api("POST", `/3d/generations/${waiting.id}/cancel`);
    assert.equal((await poll(`/3d/generations/${waiting.id}`, (j) => j.status !== "waiting_gpu")).job.status, "cancelled");
    assert.ok((await standinLog(a)).events.some((e) => e.kind === "delete" && e.prompt_id === waiting.id), "ComfyUI was asked to delete it from its queue");
    assert.equal((await standinLog(a)).runs[waiting.id], undefined, "it never ran");
    await comfy(a, "/interrupt", { method: "POST", body: JSON.stringify({ prompt_id: blockerId }) });

    const running = await mesh({ image: PICTURE.toString("base64"), resolution: 64, steps: 1000 });
    await poll(`/3d/generations/${running.id}`, (j) => j.status === "running" && Number(j.progress.step) > 0);
    await api("POST", `/3d/generations/${running.id}/cancel`);
    assert.equal((await poll(`/3d/generations/${running.id}`, (j) => j.status !== "running")).job.status, "cancelled");
    const log = await standinLog(a);
    assert.ok(log.events.some((e) => e.kind === "interrupt" && e.prompt_id === running.id), "ComfyUI was asked to interrupt it");
    assert.ok(!log.events.some((e) => e.kind === "done" && e.prompt_id === running.id));
  });

  it("finishes a job once when its worker is killed mid-way", async () => {
    const job = await mesh({ image: PICTURE.toString("base64"), resolution: 64, steps: 400 });
    await poll(`/3d/generations/${job.id}`, (j) => j.status === "running" && Number(j.progress.step) > 0);
    await p.kill("worker-temporal");
    await p.start("worker-temporal");
    const { job: done } = await poll(`/3d/generations/${job.id}`, (j) => j.status === "completed" || j.status === "failed" || j.status === "cancelled");
    assert.equal(done.status, "completed", JSON.stringify(done));
    assert.equal((await standinLog(a)).runs[job.id], 1, "ComfyUI ran the prompt once");
    assert.equal(await db.usageEvent.count({ where: { id: `job-${job.id}` } }), 1);
  });

  it("runs two jobs of one model one after the other, while another model's job runs beside them", async () => {
    const img = PICTURE.toString("base64");
    // Both engines hold each run before its first step: a1 cannot finish before b's job has started
    // (nor b's before a1's has), whatever the machine's timing, so the overlap is proven, not hoped for.
    for (const m of [a, b]) assert.equal((await comfy(m, "/standin/hold", { method: "POST" })).status, 200);
    const a1 = await mesh({ image: img, resolution: 64, steps: 4 });
    const a2 = await mesh({ image: img, resolution: 64, steps: 4 });
    const r = await api<JobView>("POST", "/3d/generations", { model: b, image: img, resolution: 64, steps: 4 });
    assert.equal(r.status, 202);
    const started = async (model: string, id: string) => {
      for (let i = 0; i < 600; i++) {
        if ((await standinLog(model)).events.some((e) => e.kind === "start" && e.prompt_id === id)) return;
        await new Promise((res) => setTimeout(res, 100));
      }
      throw new Error(`${model}'s engine never started ${id}`);
    };
    await started(a, a1.id);
    await started(b, r.body.id);
    // a1 is held in the engine, so a2 waits in the job queue behind it.
    const { job: queued } = await poll(`/3d/generations/${a2.id}`, () => true);
    assert.equal(queued.status, "queued", "a2 waits while a1 runs");
    assert.ok(Number(queued.progress.queue_ahead) >= 1, "a2 says a1 is ahead of it");
    for (const m of [a, b]) assert.equal((await comfy(m, "/standin/release", { method: "POST" })).status, 200);
    for (const id of [a1.id, a2.id, r.body.id]) assert.equal((await poll(`/3d/generations/${id}`, (j) => j.status === "completed" || j.status === "failed")).job.status, "completed");
    const at = (log: StandinLog, kind: string, id: string) => log.events.find((e) => e.kind === kind && e.prompt_id === id)!.at;
    const la = await standinLog(a);
    const lb = await standinLog(b);
    assert.ok(at(la, "start", a2.id) >= at(la, "done", a1.id), "a2 started after a1 finished");
    assert.ok(at(lb, "start", r.body.id) < at(la, "done", a2.id) && at(la, "start", a1.id) < at(lb, "done", r.body.id), "b's job overlapped a's jobs");
  });

  it("cancels a picture job when its client leaves", async () => {
    const before = new Set((await db.job.findMany({ where: { kind: "image" } })).map((j) => j.id));
    const leave = new AbortController();
    const req = client.images.generate({ model: a, prompt: "slow", size: "64x64", steps: 150 } as OpenAI.ImageGenerateParams, { signal: leave.signal, maxRetries: 0 });
    req.catch(() => undefined);
    let id: string | undefined;
    for (let i = 0; i < 300 && !id; i++) {
      const j = await db.job.findFirst({ where: { kind: "image", state: "running", id: { notIn: [...before] } } });
      id = j?.id;
      if (!id) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(id, "the picture job ran");
    leave.abort();
    for (let i = 0; i < 300; i++) {
      if ((await db.job.findUniqueOrThrow({ where: { id } })).state === "cancelled") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal((await db.job.findUniqueOrThrow({ where: { id } })).state, "cancelled");
    assert.ok((await standinLog(a)).events.some((e) => e.kind === "interrupt" && e.prompt_id === id));
  });

  it("refuses workflow definitions that contradict themselves or the graph, naming the field; lists, shows and removes", async () => {
    const ok = allInputsWorkflow("wf-refused", a);
    const steps = ok.inputs.findIndex((i) => i.name === "steps");
    const withInput = (i: number, patch: Record<string, unknown>) => ({ ...ok, inputs: ok.inputs.map((d, j) => (j === i ? { ...d, ...patch } : d)) });
    const cases: [unknown, string][] = [
      [{ ...ok, name: "bad name!" }, "name"],
      [{ ...ok, output: "hologram" }, "output"],
      [{ ...ok, graph: {} }, "graph"],
      [{ ...ok, graph: { ...ok.graph, "10": { inputs: {} } } }, "graph.10.class_type"],
      [{ ...ok, graph: { ...ok.graph, "10": { class_type: "Note", inputs: { text: "{{undeclared}}" } } } }, "graph"],
      [{ ...ok, inputs: ok.inputs.filter((i) => i.name !== "prompt") }, "graph"],
      [withInput(steps, { kind: "dial" }), `inputs.${steps}.kind`],
      [withInput(steps, { default: 99 }), `inputs.${steps}.default`],
      [withInput(steps, { min: 10, max: 2 }), `inputs.${steps}.max`],
      [withInput(steps, { name: "stepz" }), `inputs.${steps}.name`],
      [withInput(0, { default: 3 }), "inputs.0.default"],
      [withInput(4, { choices: undefined }), "inputs.4.choices"],
      [withInput(5, { default: "file-x" }), "inputs.5.default"],
      [{ ...ok, inputs: [...ok.inputs, ok.inputs[0]] }, `inputs.${ok.inputs.length}.name`],
      [{ ...ok, colour: "red" }, ""],
      // A model the catalog lacks is not found (a model of it that ComfyUI does not serve: 409).
      [{ ...ok, model: "no-such-model" }, "model"],
    ];
    for (const [body, field] of cases) {
      const res = await fetch(`${p.adminUrl}/api/v1/comfy-workflows`, { method: "POST", headers: { authorization: `Bearer ${p.adminToken}`, "content-type": "application/json" }, body: JSON.stringify(body) });
      const got = (await res.json()) as { error: { message: string; field: string | null } };
      assert.equal(res.status, field === "model" ? 404 : 400, `${field}: ${JSON.stringify(got)}`);
      assert.equal(got.error.field ?? "", field, got.error.message);
    }
    assert.equal(await db.comfyWorkflow.count({ where: { name: "wf-refused" } }), 0);
    const file = nodePath.join(p.dataDir, "wf-bad.yaml");
    fs.writeFileSync(file, `name: wf-refused\nmodel: ${a}\ngraph: {"1": {class_type: SaveImage, inputs: {filename_prefix: "{{who}}"}}}\n`);
    const refused = await p.ctl(["workflow", "add", "-f", file]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /\{\{who\}\}.*not a declared input/);

    const listed = JSON.parse((await p.ctl(["workflow", "list", "--json"])).stdout) as { name: string; nodes: number }[];
    assert.deepEqual(listed.find((w) => w.name === allInputs)?.nodes, 9);
    const shown = JSON.parse((await p.ctl(["workflow", "show", allInputs, "--json"])).stdout) as { model: string; graph: Record<string, unknown>; inputs: unknown[] };
    assert.equal(shown.model, a);
    assert.deepEqual(Object.keys(shown.graph), ["1", "2", "3", "4", "5", "6", "7", "8", "9"]);
    fs.writeFileSync(file, JSON.stringify({ ...ok, name: "wf-gone" }));
    assert.equal((await p.ctl(["workflow", "add", "-f", file])).code, 0);
    assert.deepEqual(JSON.parse((await p.ctl(["workflow", "remove", "wf-gone", "--json"])).stdout), { name: "wf-gone", removed: true });
    assert.equal((await p.ctl(["workflow", "show", "wf-gone"])).code, 1);
    const audited = (JSON.parse((await p.ctl(["audit", "--json"])).stdout) as { action: string; target: string }[]).filter((e) => e.target === "comfy-workflow/wf-gone").map((e) => e.action);
    assert.deepEqual(audited.sort(), ["comfy-workflow.remove", "comfy-workflow.save"]);
    const gone = await api<{ error: { param: string } }>("POST", "/workflows/runs", { model: "wf-gone", inputs: {} });
    assert.equal(gone.status, 404);
  });

  it("keeps a 3D job across a gateway killed and restarted: polled through the new one, its GLB downloaded", async () => {
    const job = await mesh({ image: PICTURE.toString("base64"), resolution: 64, steps: 300 });
    await poll(`/3d/generations/${job.id}`, (j) => j.status === "running" && Number(j.progress.step) > 0);
    await p.kill("gateway");
    await p.start("gateway");
    const { job: done } = await poll(`/3d/generations/${job.id}`, (j) => j.status === "completed" || j.status === "failed" || j.status === "cancelled");
    assert.equal(done.status, "completed", JSON.stringify(done));
    const content = await fetch(`${p.clientUrl}/v1/files/${done.result!.file_id}/content`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(content.status, 200);
    const glb = parseGlb(Buffer.from(await content.arrayBuffer()));
    assert.deepEqual(glb.json.asset.extras, { licence: "CreativeML Open RAIL++-M", model: a });
    assert.equal((await standinLog(a)).runs[job.id], 1);
  });

  it("refuses an upload over 64 MB by its declared length", async () => {
    const { request } = await import("node:http");
    const status = await new Promise<number>((resolve, reject) => {
      const r = request(`${p.clientUrl}/v1/files`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "multipart/form-data; boundary=x", "content-length": String(65 * 1024 * 1024) },
      });
      r.on("response", (res) => {
        resolve(res.statusCode!);
        r.destroy();
      });
      r.on("error", reject);
      r.flushHeaders();
    });
    assert.equal(status, 413);
  });

  it("keeps files to their owner: get, content, delete; other projects see nothing", async () => {
    const id = await upload(PICTURE, "mine.png");
    const got = await client.files.retrieve(id);
    assert.equal(got.bytes, PICTURE.length);
    assert.equal(got.purpose, "vision");
    const content = await client.files.content(id);
    assert.deepEqual(Buffer.from(await content.arrayBuffer()), PICTURE);
    const thirdKey = (await p.newKey({ project: "third" })).key;
    const third = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: thirdKey });
    await assert.rejects(third.files.retrieve(id), OpenAI.NotFoundError);
    await assert.rejects(third.files.delete(id), OpenAI.NotFoundError);
    await assert.rejects(client.files.create({ file: await toFile(PICTURE, "x.png"), purpose: "fine-tune" }), (e: unknown) => e instanceof OpenAI.BadRequestError && (e.error as { param?: string }).param === "purpose");
    assert.equal((await client.files.delete(id)).deleted, true);
    await assert.rejects(client.files.retrieve(id), OpenAI.NotFoundError);
  });
});
