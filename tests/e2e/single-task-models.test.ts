// Models of one task, as vLLM serves a Whisper model or an embedding model: their engine refuses
// every other task's route (a 404 "does not support"), so a replica's start-up check
// (activities/smoke-test.ts) must prove it with the task it has, not only with a chat. Sims play
// them (`--task`); each is served to the end, then answers its own route through the gateway with
// the official openai client, and refuses a chat.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI, { APIError, toFile } from "openai";
import { silentWav } from "../../common/wav.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

describe("models that serve one task", () => {
  let p: Platform;
  let client: OpenAI;

  before(async () => {
    p = await startPlatform();
    client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: (await p.newKey()).key, maxRetries: 0 });
  });
  after(async () => {
    await p?.stop();
  });

  const refusesChat = async (model: string) => {
    const chat = client.chat.completions.create({ model, messages: [{ role: "user", content: "hello" }], max_tokens: 1 });
    await assert.rejects(chat, (e: unknown) => e instanceof APIError && e.status === 404 && /does not support/.test(e.message));
  };

  it("a transcription-only model (vLLM with Whisper) is served, transcribes and refuses a chat", async () => {
    const model = uniqueModel("stt-only");
    await p.serve(model, { args: ["--task=transcription"] });
    const t = await client.audio.transcriptions.create({ model, file: await toFile(silentWav(2), "two-seconds.wav"), response_format: "json" });
    assert.ok(t.text.trim().length > 0, JSON.stringify(t));
    await refusesChat(model);
  });

  it("an embedding-only model (vLLM's pooling runner) is served, embeds and refuses a chat", async () => {
    const model = uniqueModel("embed-only");
    await p.serve(model, { args: ["--task=embed"] });
    const e = await client.embeddings.create({ model, input: ["one", "two"] });
    assert.equal(e.data.length, 2);
    assert.ok(e.data.every((d) => d.embedding.length > 0));
    await refusesChat(model);
  });
});
