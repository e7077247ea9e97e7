// POST /v1/audio/speech in OpenAI's shape (text to speech): a JSON body checked here, then sent on
// as it is to a replica of the model that serves OpenAI's route (vLLM-Omni's models, the sim) under
// the same key, allowlist, limits, admission and usage as chat (forward.ts); guardrail input rules
// read `input`. The engine's audio, or its server-sent events with `stream_format: "sse"`, goes
// back byte for byte as it comes, typed as the engine typed it. OpenAI bills speech by the
// character: the input's characters are recorded as the request's prompt tokens.
import express from "express";
import { z } from "zod";
import type { Responder } from "../router/proxy.ts";
import { engineErrorBody } from "./audio.ts";
import type { ClientApiDeps } from "./context.ts";
import { parseBody, wrap } from "./express-util.ts";
import { forward } from "./forward.ts";

/** OpenAI's limit on the text to speak. */
export const MAX_SPEECH_CHARS = 4096;
export const SPEECH_FORMATS = ["mp3", "opus", "aac", "flac", "wav", "pcm"] as const;
/** The media types of the answers, as OpenAI types them: one per format, and the events' stream. */
export const SPEECH_CONTENT_TYPES = ["audio/mpeg", "audio/opus", "audio/aac", "audio/flac", "audio/wav", "audio/pcm", "text/event-stream"];

export const speechRequest = z.looseObject({
  model: z.string().min(1).max(256),
  input: z.string().min(1).max(MAX_SPEECH_CHARS).describe(`The text to speak: at most ${MAX_SPEECH_CHARS} characters`),
  voice: z.union([z.string().min(1).max(256), z.looseObject({ id: z.string().min(1).max(256) })], { error: "a voice's name, or {id} of a custom voice" }),
  instructions: z.string().max(MAX_SPEECH_CHARS).optional(),
  response_format: z.enum(SPEECH_FORMATS).optional().describe("The audio's format; the engine's default (OpenAI's: mp3) when absent"),
  // A JSON number only: schemas.ts's `num` takes strings too, but its pattern holds whole bounds only.
  speed: z.number().min(0.25).max(4).optional(),
  stream_format: z.enum(["audio", "sse"]).optional().describe("sse: speech.audio.delta events of base64 audio, then speech.audio.done"),
});

/**
 * Relays the engine's answer as it comes, without holding it whole: audio of minutes is megabytes.
 * An error becomes OpenAI's error object. A stream cut off midway is cut off for the client too
 * (the connection destroyed), so a truncated file is never taken for a whole one.
 */
const relayAudio =
  (characters: number): Responder =>
  async (res, e, up, p) => {
    const ours = { "x-request-id": p.requestId, "x-llmgw-replica": e.id };
    if (up.statusCode !== 200) {
      const out = engineErrorBody(up.statusCode, await up.text());
      if (up.headers["retry-after"] !== undefined) res.setHeader("retry-after", up.headers["retry-after"]);
      res.writeHead(up.statusCode, { "content-type": "application/json", "content-length": Buffer.byteLength(out), ...ours });
      res.end(out);
      return { status: up.statusCode, endpoint: e, usage: null, ttftMs: performance.now() - p.started };
    }
    const length = up.headers["content-length"];
    res.writeHead(200, { "content-type": String(up.headers["content-type"] ?? "application/octet-stream"), ...(length !== undefined && { "content-length": length }), ...ours });
    res.flushHeaders();
    // The engine made the audio whether or not the client read it all: billed either way.
    const usage = { prompt_tokens: characters, completion_tokens: 0 };
    let ttftMs: number | null = null;
    try {
      await up.bytes((chunk) => {
        ttftMs ??= performance.now() - p.started;
        res.write(chunk);
      }, res);
    } catch {
      res.destroy();
      return { status: 499, endpoint: e, usage, ttftMs };
    }
    res.end();
    return { status: 200, endpoint: e, usage, ttftMs };
  };

export function speechRoutes(deps: ClientApiDeps): express.Router {
  const r = express.Router();
  r.post(
    "/audio/speech",
    wrap(async (req, res) => {
      const started = performance.now();
      const body = parseBody(speechRequest, req.body);
      await forward(deps, req, res, body.model, { path: "/v1/audio/speech", body, stream: false, clientWantsUsage: false, started, respond: relayAudio(body.input.length) });
    }),
  );
  return r;
}
