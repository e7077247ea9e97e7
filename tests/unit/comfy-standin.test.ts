// The ComfyUI stand-in speaks ComfyUI's API as ComfyUI does (queue order, progress over /ws,
// history, /view, upload, delete, interrupt, validation); and the PNG and GLB codecs (the multipart
// reader has tests/unit/files-multipart.test.ts).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { WebSocket } from "undici";
import { startStandin, type Standin } from "../../agent/engines/comfyui-standin.ts";
import { crc32, encodeRgb, replaceText, readChunks, tEXt, textEntries } from "../../common/png.ts";
import { parseGlb, triangleFan, withAssetExtras } from "../../common/glb.ts";
import { fillGraph } from "../../activities/jobs.ts";

type Msg = { type: string; data: Record<string, unknown> };
const graph = (steps: number, extra: Record<string, unknown> = {}) => ({
  "3": { class_type: "KSampler", inputs: { steps, seed: 5 } },
  "5": { class_type: "EmptyLatentImage", inputs: { width: 32, height: 16, batch_size: 1 } },
  "9": { class_type: "SaveImage", inputs: { filename_prefix: "t" } },
  ...extra,
});

describe("ComfyUI stand-in", () => {
  let s: Standin;
  let base: string;
  const post = async (p: string, body: unknown) => fetch(`${base}${p}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const get = async <T,>(p: string) => (await (await fetch(`${base}${p}`)).json()) as T;
  const until = async (what: string, ok: () => Promise<boolean>) => {
    for (let i = 0; i < 500; i++) {
      if (await ok()) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`never: ${what}`);
  };

  before(async () => {
    s = await startStandin({ port: 0, listen: "127.0.0.1", stepMs: 5 });
    base = `http://127.0.0.1:${s.port}`;
  });
  after(async () => s.close());

  it("runs prompts in order, one at a time, with progress over /ws and outputs in history", async () => {
    const msgs: Msg[] = [];
    const ws = new WebSocket(`${base.replace("http", "ws")}/ws?clientId=c1`);
    ws.onmessage = (e) => msgs.push(JSON.parse(String(e.data)) as Msg);
    await new Promise((r) => (ws.onopen = r));
    // The first prompt is held before its first step, so both are still queued when /queue is
    // asked, however slow the machine.
    await post("/standin/hold", {});
    const a = (await (await post("/prompt", { prompt: graph(5), client_id: "c1" })).json()) as { prompt_id: string; number: number };
    const b = (await (await post("/prompt", { prompt: graph(3), client_id: "c1", prompt_id: "mine" })).json()) as { prompt_id: string };
    assert.equal(b.prompt_id, "mine");
    const q = await get<{ queue_running: unknown[][]; queue_pending: unknown[][] }>("/queue");
    assert.deepEqual(q.queue_running.map((e) => e[1]), [a.prompt_id]);
    assert.deepEqual(q.queue_pending.map((e) => e[1]), ["mine"]);
    await post("/standin/release", {});
    await until("both done", async () => Object.keys(await get("/history/mine")).length > 0);
    ws.close();
    const progress = msgs.filter((m) => m.type === "progress" && m.data.prompt_id === a.prompt_id).map((m) => m.data.value);
    assert.deepEqual(progress, [1, 2, 3, 4, 5]);
    const order = msgs.filter((m) => m.type === "execution_start").map((m) => m.data.prompt_id);
    assert.deepEqual(order, [a.prompt_id, "mine"]);
    const h = (await get<Record<string, { outputs: Record<string, { images: { filename: string }[] }>; status: { status_str: string } }>>(`/history/${a.prompt_id}`))[a.prompt_id]!;
    assert.equal(h.status.status_str, "success");
    const png = Buffer.from(await (await fetch(`${base}/view?filename=${h.outputs["9"]!.images[0]!.filename}&type=output`)).arrayBuffer());
    assert.ok(JSON.parse(textEntries(png).prompt!)["3"], "ComfyUI puts the prompt in the picture");
  });

  it("deletes a pending prompt and interrupts a running one", async () => {
    const running = (await (await post("/prompt", { prompt: graph(10000) })).json()) as { prompt_id: string };
    const pending = (await (await post("/prompt", { prompt: graph(2) })).json()) as { prompt_id: string };
    await post("/queue", { delete: [pending.prompt_id] });
    assert.equal((await get<{ queue_pending: unknown[] }>("/queue")).queue_pending.length, 0);
    await post("/interrupt", { prompt_id: running.prompt_id });
    await until("interrupted", async () => Object.keys(await get(`/history/${running.prompt_id}`)).length > 0);
    const h = (await get<Record<string, { status: { status_str: string; messages: [string][] } }>>(`/history/${running.prompt_id}`))[running.prompt_id]!;
    assert.equal(h.status.status_str, "error");
    assert.ok(h.status.messages.some(([k]) => k === "execution_interrupted"));
    assert.deepEqual(await get(`/history/${pending.prompt_id}`), {});
    const log = await get<{ events: { kind: string; prompt_id: string }[]; runs: Record<string, number> }>("/standin/log");
    assert.equal(log.runs[pending.prompt_id], undefined);
  });

  it("refuses a graph whose loader names a file not uploaded, takes it once uploaded", async () => {
    const g = graph(1, { "1": { class_type: "LoadImage", inputs: { image: "cat.png" } } });
    const bad = await post("/prompt", { prompt: g });
    assert.equal(bad.status, 400);
    assert.ok(((await bad.json()) as { node_errors: Record<string, unknown> }).node_errors["1"]);
    const form = new FormData();
    form.set("image", new Blob([new Uint8Array(encodeRgb(2, 2, () => [0, 0, 0]))]), "cat.png");
    assert.equal((await fetch(`${base}/upload/image`, { method: "POST", body: form })).status, 200);
    assert.equal((await post("/prompt", { prompt: g })).status, 200);
    assert.equal((await post("/prompt", { prompt: { "1": { class_type: "KSampler", inputs: {} } } })).status, 400, "no output node");
  });
});

describe("PNG, GLB and placeholders", () => {
  it("computes CRC-32 as zlib does", () => assert.equal(crc32(Buffer.from("123456789")), 0xcbf43926));

  it("strips a picture's text and adds the licence as iTXt", () => {
    const png = encodeRgb(4, 4, () => [1, 2, 3], [tEXt("workflow", "{}")]);
    const out = replaceText(png, { licence: "Apache-2.0 – ü" });
    assert.deepEqual(textEntries(out), { licence: "Apache-2.0 – ü" });
    assert.deepEqual(
      readChunks(out).map((c) => c.type),
      ["IHDR", "iTXt", "IDAT", "IEND"],
    );
  });

  it("writes asset.extras into a GLB and keeps its mesh", () => {
    const glb = triangleFan(8, "t");
    const out = parseGlb(withAssetExtras(glb, { licence: "MIT" }));
    assert.deepEqual(out.json.asset.extras, { licence: "MIT" });
    assert.deepEqual(out.bin, parseGlb(glb).bin);
  });

  it("fills placeholders keeping their types", () => {
    assert.deepEqual(fillGraph({ a: "{{n}}", b: ["x {{t}}", 1], c: "{{missing}}" }, { n: 3, t: "cat" }), { a: 3, b: ["x cat", 1], c: "{{missing}}" });
  });
});
