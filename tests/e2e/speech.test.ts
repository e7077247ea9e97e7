// POST /v1/audio/speech end to end through the official openai client: a sim model (its
// synthesizer: a 24 kHz tone, 10 ms a character at speed 1) behind the real gateway, as wav, pcm and
// OpenAI's server-sent events; the allowlist; malformed bodies refused in OpenAI's shape before
// they reach a limit or the ledger; one usage row per call served, the input's characters its prompt.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";
import { limitsLoaded } from "../helpers/platform-setup.ts";

const SAMPLES_PER_CHAR = 240;

/** A 16-bit mono PCM WAV file read back: its format and samples. */
function readWav(b: Buffer): { rate: number; channels: number; bits: number; samples: Int16Array } {
  assert.equal(b.toString("ascii", 0, 4), "RIFF");
  assert.equal(b.readUInt32LE(4), b.length - 8, "the RIFF size is the file's");
  assert.equal(b.toString("ascii", 8, 16), "WAVEfmt ");
  assert.equal(b.readUInt16LE(20), 1, "PCM");
  assert.equal(b.toString("ascii", 36, 40), "data");
  assert.equal(b.readUInt32LE(40), b.length - 44, "the data chunk is the rest of the file");
  return { rate: b.readUInt32LE(24), channels: b.readUInt16LE(22), bits: b.readUInt16LE(34), samples: pcm(b.subarray(44)) };
}

const pcm = (b: Buffer): Int16Array => {
  const out = new Int16Array(b.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = b.readInt16LE(i * 2);
  return out;
};

/** The SSE body's events, parsed. */
const events = (text: string): { type: string; audio?: string; usage?: { input_tokens: number; output_tokens: number; total_tokens: number } }[] =>
  text
    .split("\n\n")
    .filter((e) => e.startsWith("data: "))
    .map((e) => JSON.parse(e.slice(6)) as { type: string });

describe("POST /v1/audio/speech", () => {
  let p: Platform;
  let key: string;
  let client: OpenAI;
  const model = uniqueModel("e2e-tts");
  /** The inputs of the calls the sim answered 200, in order. */
  const served: string[] = [];

  before(async () => {
    p = await startPlatform();
    await p.serve(model);
    ({ key } = await p.newKey());
    client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, maxRetries: 0 });
  });
  after(async () => {
    await p?.stop();
  });

  const speech = async (body: OpenAI.Audio.SpeechCreateParams) => {
    const r = await client.audio.speech.create(body);
    const bytes = Buffer.from(await r.arrayBuffer());
    served.push(body.input);
    return { type: r.headers.get("content-type"), bytes };
  };

  it("answers a WAV whose length follows the input's and the speed", async () => {
    const input = "x".repeat(100);
    const one = await speech({ model, voice: "alloy", input, response_format: "wav" });
    assert.equal(one.type, "audio/wav");
    const w = readWav(one.bytes);
    assert.deepEqual([w.rate, w.channels, w.bits], [24000, 1, 16]);
    assert.equal(w.samples.length, 100 * SAMPLES_PER_CHAR, "1 s for 100 characters");
    assert.ok(Math.max(...w.samples) > 1000 && Math.min(...w.samples) < -1000, "a tone, not silence");
    const twice = readWav((await speech({ model, voice: "alloy", input: input + input, response_format: "wav" })).bytes);
    assert.equal(twice.samples.length, 2 * w.samples.length);
    const fast = readWav((await speech({ model, voice: { id: "voice_1" }, input, response_format: "wav", speed: 2, instructions: "brisk" })).bytes);
    assert.equal(fast.samples.length, w.samples.length / 2);
    const slow = readWav((await speech({ model, voice: "nova", input, response_format: "wav", speed: 0.25 })).bytes);
    assert.equal(slow.samples.length, w.samples.length * 4);
    // Deterministic: the same request, the same audio.
    assert.deepEqual((await speech({ model, voice: "alloy", input, response_format: "wav" })).bytes, one.bytes);
  });

  it("answers raw samples for pcm: the WAV's data", async () => {
    const input = "hello from the speech route";
    const raw = await speech({ model, voice: "echo", input, response_format: "pcm" });
    assert.equal(raw.type, "audio/pcm");
    assert.equal(raw.bytes.length, input.length * SAMPLES_PER_CHAR * 2);
    const wav = await speech({ model, voice: "echo", input, response_format: "wav" });
    assert.deepEqual(raw.bytes, wav.bytes.subarray(44));
  });

  it("streams speech.audio.delta events, then speech.audio.done with the usage", async () => {
    const input = "streamed ".repeat(30);
    const r = await client.audio.speech.create({ model, voice: "alloy", input, response_format: "wav", stream_format: "sse" });
    served.push(input);
    assert.match(r.headers.get("content-type") ?? "", /^text\/event-stream/);
    const got = events(await r.text());
    const deltas = got.slice(0, -1);
    assert.ok(deltas.length > 1, "the audio comes in more than one event");
    assert.ok(deltas.every((e) => e.type === "speech.audio.delta" && typeof e.audio === "string"));
    const done = got.at(-1)!;
    assert.equal(done.type, "speech.audio.done");
    assert.equal(done.usage!.input_tokens, Math.ceil(input.length / 4));
    assert.equal(done.usage!.total_tokens, done.usage!.input_tokens + done.usage!.output_tokens);
    const audio = Buffer.concat(deltas.map((e) => Buffer.from(e.audio!, "base64")));
    assert.deepEqual(audio, (await speech({ model, voice: "alloy", input, response_format: "wav" })).bytes, "the events carry the same file");
  });

  it("passes the engine's refusal of a format on in OpenAI's shape", async () => {
    for (const response_format of ["mp3", undefined] as const) {
      const r = await fetch(`${p.clientUrl}/v1/audio/speech`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ model, voice: "alloy", input: "hi", response_format }) });
      assert.equal(r.status, 400);
      const body = (await r.json()) as { error: { message: string; type: string; param: string | null } };
      assert.equal(body.error.type, "invalid_request_error");
      assert.equal(body.error.param, "response_format");
      assert.match(body.error.message, /only wav and pcm/);
    }
  });

  it("refuses malformed bodies in OpenAI's shape before any limit, and models the key may not use", async () => {
    const rated = await p.newKey({ project: "tts-rated" });
    assert.equal((await p.ctl(["limits", "set", "project", "tts-rated", "--rpm", "2"])).code, 0);
    await limitsLoaded(p, model);
    const post = async (body: unknown, apiKey = rated.key) => {
      const r = await fetch(`${p.clientUrl}/v1/audio/speech`, { method: "POST", headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });
      const type = r.headers.get("content-type");
      // An answer's audio is read and dropped; an error is OpenAI's JSON.
      const answer = type?.startsWith("application/json") ? ((await r.json()) as { error: { message: string; type: string; param: string | null; code: string | null } }) : (await r.arrayBuffer(), { error: { message: "", type: "", param: null, code: null } });
      return { status: r.status, type, body: answer };
    };
    const good = { model, voice: "alloy", input: "hi", response_format: "pcm" };
    for (const [body, param] of [
      [{ model, voice: "alloy" }, "input"],
      [{ ...good, input: "x".repeat(4097) }, "input"],
      [{ ...good, input: "" }, "input"],
      [{ ...good, input: ["hi"] }, "input"],
      [{ ...good, voice: 7 }, "voice"],
      [{ model, input: "hi" }, "voice"],
      [{ ...good, speed: 5 }, "speed"],
      [{ ...good, speed: "fast" }, "speed"],
      [{ ...good, response_format: "ogg" }, "response_format"],
      [{ ...good, stream_format: "chunks" }, "stream_format"],
      [{ voice: "alloy", input: "hi" }, "model"],
    ] as const) {
      const r = await post(body);
      assert.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
      assert.match(r.type ?? "", /^application\/json/);
      assert.equal(r.body.error.type, "invalid_request_error");
      assert.equal(r.body.error.param, param, JSON.stringify(body).slice(0, 80));
    }
    // Eleven refusals counted nothing against the project's 2 requests a minute, which do hold.
    for (let i = 0; i < 2; i++) {
      assert.equal((await post(good)).status, 200);
      served.push(good.input);
    }
    const limited = await post(good);
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.type, "rate_limit_error");
    const other = await p.newKey({ args: ["--model", "nothing-*"] });
    const refused = await post(good, other.key);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.type, "permission_error");
    assert.equal(refused.body.error.code, "model_not_allowed");
    assert.equal((await post({ ...good, model: "no-such-tts" }, key)).body.error.code, "model_not_found");
  });

  it("records a usage row per call served, the input's characters as its prompt tokens", async () => {
    const { prisma } = await import("../../common/db.ts");
    const db = prisma(p.env.DATABASE_URL);
    const expected = served.length + 2; // and the two format refusals the engine answered
    let rows: { status: number; promptTokens: number; completionTokens: number; replicaId: string | null }[] = [];
    try {
      for (const deadline = Date.now() + 15_000; Date.now() < deadline && rows.length < expected; await new Promise((res) => setTimeout(res, 200))) {
        rows = await db.usageEvent.findMany({ where: { model, endpoint: "/v1/audio/speech" }, orderBy: { at: "asc" } });
      }
      // A moment more: a row for a refused body would come as late as these did.
      await new Promise((res) => setTimeout(res, 500));
      rows = await db.usageEvent.findMany({ where: { model, endpoint: "/v1/audio/speech" }, orderBy: { at: "asc" } });
    } finally {
      await db.$disconnect();
    }
    assert.equal(rows.length, expected);
    const ok = rows.filter((r) => r.status === 200);
    assert.equal(ok.length, served.length);
    assert.deepEqual(ok.map((r) => r.promptTokens).sort((a, b) => a - b), served.map((s) => s.length).sort((a, b) => a - b));
    assert.ok(ok.every((r) => r.completionTokens === 0 && r.replicaId !== null));
    assert.deepEqual(rows.filter((r) => r.status !== 200).map((r) => r.status), [400, 400]);
  });
});
