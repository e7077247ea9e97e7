// POST /v1/audio/transcriptions end to end through the official openai client: a sim model (its
// transcriber: 2 words a second of a fixed sentence) behind the real gateway, in every
// response_format, with usage; the allowlist; malformed forms in OpenAI's error shape. The sim's
// whisper.cpp protocol (/inference) is read directly, as the whisper-server engine serves it.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI, { toFile } from "openai";
import { engineAuth } from "../../common/engine-key.ts";
import { silentWav } from "../../common/wav.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

describe("POST /v1/audio/transcriptions", () => {
  let p: Platform;
  let key: string;
  let client: OpenAI;
  const model = uniqueModel("e2e-whisper");

  before(async () => {
    p = await startPlatform();
    await p.serve(model);
    ({ key } = await p.newKey());
    client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, maxRetries: 0 });
  });
  after(async () => {
    await p?.stop();
  });

  it("transcribes in each response_format, fixed by the audio's length, and records usage", async () => {
    const file = async () => toFile(silentWav(3), "hello.wav", { type: "audio/wav" });
    const json = await client.audio.transcriptions.create({ model, file: await file() });
    assert.equal(json.text, "the quick brown fox jumps over");
    const text = await client.audio.transcriptions.create({ model, file: await file(), response_format: "text" });
    assert.equal(String(text).trim(), "the quick brown fox jumps over");
    const srt = await client.audio.transcriptions.create({ model, file: await toFile(silentWav(7), "a.wav"), response_format: "srt" });
    assert.equal(String(srt), "1\n00:00:00,000 --> 00:00:05,000\nthe quick brown fox jumps over the lazy dog the\n\n2\n00:00:05,000 --> 00:00:07,000\nquick brown fox jumps\n\n");
    const vtt = await client.audio.transcriptions.create({ model, file: await file(), response_format: "vtt" });
    assert.match(String(vtt), /^WEBVTT\n\n00:00:00\.000 --> 00:00:03\.000\nthe quick brown fox jumps over\n/);
    const verbose = await client.audio.transcriptions.create({ model, file: await file(), response_format: "verbose_json", language: "en" });
    assert.equal(verbose.duration, 3);
    assert.equal(verbose.segments!.length, 1);
    const raw = await fetch(`${p.clientUrl}/v1/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: (() => { const f = new FormData(); f.append("model", model); f.append("response_format", "srt"); f.append("file", new Blob([new Uint8Array(silentWav(1))]), "x.wav"); return f; })() });
    assert.equal(raw.headers.get("content-type"), "text/plain; charset=utf-8");
    const { prisma } = await import("../../common/db.ts");
    const db = prisma(p.env.DATABASE_URL);
    let rows: { completionTokens: number }[] = [];
    for (const deadline = Date.now() + 15_000; Date.now() < deadline && rows.length < 6; await new Promise((res) => setTimeout(res, 200))) {
      rows = await db.usageEvent.findMany({ where: { model, endpoint: "/v1/audio/transcriptions", status: 200 } });
    }
    await db.$disconnect();
    assert.equal(rows.length, 6);
    assert.ok(rows.every((r) => r.completionTokens > 0));
  });

  it("refuses malformed forms in OpenAI's error shape, and models the key may not use", async () => {
    const post = async (form: FormData | string, apiKey = key) => {
      const r = await fetch(`${p.clientUrl}/v1/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${apiKey}`, ...(typeof form === "string" ? { "content-type": "application/json" } : {}) }, body: form });
      return { status: r.status, body: (await r.json()) as { error: { type: string; param: string | null; code: string | null } } };
    };
    const form = (fields: Record<string, string>, withFile = true) => {
      const f = new FormData();
      for (const [k, v] of Object.entries(fields)) f.append(k, v);
      if (withFile) f.append("file", new Blob([new Uint8Array(silentWav(1))]), "x.wav");
      return f;
    };
    for (const [f, param] of [
      [form({ model }, false), "file"],
      [form({}), "model"],
      [form({ model, response_format: "mp3" }), "response_format"],
      [form({ model, temperature: "hot" }), "temperature"],
      [form({ model, language: "English!" }), "language"],
      ['{"model": "x"}', "file"],
    ] as const) {
      const r = await post(f);
      assert.equal(r.status, 400, String(param));
      assert.equal(r.body.error.type, "invalid_request_error");
      assert.equal(r.body.error.param, param);
    }
    const other = await p.newKey({ args: ["--model", "nothing-*"] });
    const refused = await post(form({ model }), other.key);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, "model_not_allowed");
    assert.equal((await post(form({ model: "no-such-model" }))).body.error.code, "model_not_found");
  });

  it("the sim speaks whisper.cpp's server protocol on /inference", async () => {
    const shown = await p.admin<{ replicas: { id: string; url: string }[] }>("GET", `/models/${model}`);
    const headers = engineAuth(p.env.LLMGW_CLUSTER_TOKEN!, shown.replicas[0]!.id);
    const f = new FormData();
    f.append("file", new Blob([new Uint8Array(silentWav(2))]), "x.wav");
    f.append("response_format", "json");
    const r = await fetch(`${shown.replicas[0]!.url}/inference`, { method: "POST", headers, body: f });
    assert.deepEqual(await r.json(), { text: "the quick brown fox" });
    const bad = await fetch(`${shown.replicas[0]!.url}/inference`, { method: "POST", headers, body: new FormData() });
    assert.equal(bad.status, 400);
    assert.deepEqual(await bad.json(), { error: "no 'file' field in the request" });
  });
});
