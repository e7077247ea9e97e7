// POST /v1/audio/transcriptions in OpenAI's shape: a multipart form (file, model, response_format
// json|text|srt|vtt|verbose_json, language, prompt, temperature) read with busboy, checked, and
// sent on as multipart to a replica of the model that serves OpenAI's route: vLLM with a Whisper
// model, or whisper.cpp's server (engine `whisper-server`, started with its inference path set to
// this route). Under the same key, allowlist, limits, admission and usage as chat (forward.ts);
// guardrail input rules read `prompt`. The engine's answer is relayed as it is (JSON or text).
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import express from "express";
import { z } from "zod";
import { ApiError } from "../errors.ts";
import type { ClientApiDeps } from "./context.ts";
import { parseBody, wrap } from "./express-util.ts";
import { MAX_FIELD_BYTES, MultipartError, OTHER_FIELDS_META, receiveMultipart } from "./files-multipart.ts";
import { forward } from "./forward.ts";
import { approxTokens } from "../router/request-limits.ts";
import type { Responder } from "../router/proxy.ts";

/** OpenAI's limit on an audio file. */
export const MAX_AUDIO_BYTES = 25 * 1024 * 1024;

export const transcriptionForm = z
  .object({
  file: z.file().describe("The audio file: wav, mp3, flac, ogg, webm, m4a; at most 25 MB"),
  model: z.string().min(1).max(256),
  response_format: z.enum(["json", "text", "srt", "vtt", "verbose_json"]).optional(),
  language: z.string().regex(/^[a-z]{2,3}$/, "an ISO-639-1 code such as en").optional(),
  prompt: z.string().max(4096).optional(),
  temperature: z.coerce.number().min(0).max(1).optional(),
  })
  // Other fields (OpenAI's timestamp_granularities[], include[]) are read and not sent on.
  .catchall(z.string().max(MAX_FIELD_BYTES))
  .meta(OTHER_FIELDS_META);
const fieldsSchema = transcriptionForm.omit({ file: true });

/** A multipart body of these fields and the file, as a client would send it. */
export function encodeForm(fields: Record<string, string>, file: { name: string; bytes: Buffer }): { payload: Buffer; contentType: string } {
  const boundary = `llmgw-${randomUUID()}`;
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  const safe = file.name.replace(/["\r\n\\]/g, "_") || "audio";
  parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${safe}"\r\ncontent-type: application/octet-stream\r\n\r\n`), file.bytes, Buffer.from(`\r\n--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/**
 * An engine's error answer as OpenAI's error object, its message and named field kept (whisper.cpp's
 * is `{"error": "…"}`; vLLM's `code` is a number; a proxy's page is not JSON).
 */
export function engineErrorBody(status: number, text: string): string {
  let message = `the engine answered ${status}`;
  let param: string | null = null;
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    const e = parsed.error as { message?: unknown; param?: unknown } | string | null | undefined;
    if (typeof e === "string") message = e;
    else if (typeof e?.message === "string") message = e.message;
    if (typeof e !== "string" && typeof e?.param === "string") param = e.param;
  } catch {
    // not JSON: the generic message
  }
  return JSON.stringify({ error: { message, type: status >= 500 ? "server_error" : "invalid_request_error", param, code: null } });
}

/**
 * The engine's answer in OpenAI's shape: json and verbose_json as JSON, text, srt and vtt as
 * text/plain (whisper.cpp's server types them text/html, application/x-subrip, text/vtt), and an
 * error as OpenAI's error object (whisper.cpp's is `{"error": "…"}`). The transcript's tokens, at 4
 * characters each, are the request's completion tokens.
 */
const openAIAnswer =
  (format: string): Responder =>
  async (res, e, up, p) => {
    const text = await up.text();
    let out = text;
    let transcript = text;
    let ctype = format === "json" || format === "verbose_json" ? "application/json" : "text/plain; charset=utf-8";
    if (up.statusCode !== 200) {
      ctype = "application/json";
      out = engineErrorBody(up.statusCode, text);
    } else if (ctype === "application/json") {
      try {
        transcript = String((JSON.parse(text) as { text?: unknown }).text ?? "");
      } catch {
        transcript = "";
      }
    }
    res.writeHead(up.statusCode, { "content-type": ctype, "content-length": Buffer.byteLength(out), "x-request-id": p.requestId, "x-llmgw-replica": e.id });
    res.end(out);
    const usage = up.statusCode === 200 ? { prompt_tokens: 0, completion_tokens: transcript ? approxTokens(transcript) : 0 } : null;
    return { status: up.statusCode, endpoint: e, usage, ttftMs: performance.now() - p.started };
  };

export function audioRoutes(deps: ClientApiDeps): express.Router {
  const r = express.Router();
  r.post(
    "/audio/transcriptions",
    wrap(async (req, res) => {
      const started = performance.now();
      const tmp = path.join(os.tmpdir(), `llmgw-audio-${randomUUID()}`);
      let bytes: Buffer;
      let fields: Record<string, string>;
      let name: string;
      try {
        const got = await receiveMultipart(req, req.headers["content-type"], tmp, MAX_AUDIO_BYTES).catch((err: unknown) => {
          res.setHeader("connection", "close");
          if (err instanceof MultipartError) throw new ApiError(err.tooLarge ? "too_large" : "invalid_request", err.message, { param: "file" });
          throw err;
        });
        if (!got.file || got.file.field !== "file" || got.file.bytes === 0) throw new ApiError("invalid_request", "file: an audio file is required", { param: "file" });
        bytes = fs.readFileSync(tmp);
        fields = got.fields;
        name = got.file.filename;
      } finally {
        fs.rmSync(tmp, { force: true });
      }
      const f = parseBody(fieldsSchema, fields);
      const sent = Object.fromEntries(Object.entries(fields).filter(([k]) => k in fieldsSchema.shape));
      const encode = (body: Record<string, unknown>) => {
        const out: Record<string, string> = { ...sent, model: String(body.model) };
        if (typeof body.prompt === "string") out.prompt = body.prompt;
        return encodeForm(out, { name, bytes });
      };
      const body: Record<string, unknown> = f.prompt === undefined ? { model: f.model } : { model: f.model, prompt: f.prompt };
      await forward(deps, req, res, f.model, { path: "/v1/audio/transcriptions", body, encode, stream: false, clientWantsUsage: false, started, respond: openAIAnswer(f.response_format ?? "json") });
    }),
  );
  return r;
}
