// The sim as a text-to-speech engine on OpenAI's POST /v1/audio/speech (as vLLM-Omni serves it): a
// deterministic synthesizer whose audio is a 400 Hz tone, 16-bit PCM mono at 24 kHz, 10 ms a
// character of input at speed 1 (so its length follows the input's and, inversely, the speed).
// `wav` is that tone in a RIFF/WAVE file, `pcm` its raw samples; mp3, opus, aac and flac are
// refused (400): the sim encodes nothing else. `stream_format: "sse"` sends the same bytes as
// OpenAI's speech.audio.delta events (base64), then speech.audio.done with the usage. The answer is
// written piece by piece as the client reads it, as an engine streams its audio.
import type http from "node:http";
import { wavHeader } from "../../../common/wav.ts";
import { readJson, type Replies } from "./replies.ts";

export const SAMPLE_RATE = 24_000;
/** 10 ms of audio a character at speed 1. */
export const SAMPLES_PER_CHAR = 240;
/** A 400 Hz cycle is a whole 60 samples at 24 kHz, so one piece of tone repeats without a seam. */
const PERIOD = 60;
const PIECE_SAMPLES = 80 * PERIOD;
const TONE = Buffer.alloc(PIECE_SAMPLES * 2);
for (let i = 0; i < PIECE_SAMPLES; i++) TONE.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * i) / PERIOD)), i * 2);

const FORMATS = ["mp3", "opus", "aac", "flac", "wav", "pcm"];
const TYPES: Record<string, string> = { wav: "audio/wav", pcm: "audio/pcm" };
/** Audio tokens in the done event's usage: one per 20 ms, a neural codec's usual frame. */
const SAMPLES_PER_AUDIO_TOKEN = 480;

/** How many samples the sim speaks for so many characters at this speed. */
export const speechSamples = (characters: number, speed: number): number => Math.max(1, Math.round((characters * SAMPLES_PER_CHAR) / speed));

/** The answer's bytes in order: the header (wav), then the tone a piece at a time. */
function* audioPieces(format: string, samples: number): Generator<Buffer> {
  if (format === "wav") yield wavHeader(samples, SAMPLE_RATE);
  for (let left = samples; left > 0; left -= PIECE_SAMPLES) yield left >= PIECE_SAMPLES ? TONE : TONE.subarray(0, left * 2);
}

interface SpeechAsk {
  characters: number;
  format: string;
  speed: number;
  sse: boolean;
}

/** The request as the sim reads it, or what is wrong with it (vLLM checks these fields too). */
function readAsk(body: unknown): SpeechAsk | { message: string; param: string | null } {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return { message: "The request body must be a JSON object.", param: null };
  const b = body as Record<string, unknown>;
  if (typeof b.input !== "string") return { message: "input must be a string", param: "input" };
  const format = b.response_format ?? "mp3";
  if (typeof format !== "string" || !FORMATS.includes(format)) return { message: `response_format must be one of ${FORMATS.join(", ")}`, param: "response_format" };
  if (!(format in TYPES)) return { message: `the sim engine encodes only wav and pcm, not ${format}`, param: "response_format" };
  const speed = b.speed ?? 1;
  if (typeof speed !== "number" || !(speed >= 0.25 && speed <= 4)) return { message: "speed must be a number from 0.25 to 4.0", param: "speed" };
  if (b.stream_format !== undefined && b.stream_format !== "audio" && b.stream_format !== "sse") return { message: "stream_format must be audio or sse", param: "stream_format" };
  return { characters: b.input.length, format, speed, sse: b.stream_format === "sse" };
}

/** Resolves when `res` can take more, or has closed (a client gone stops the writing). */
const writable = (res: http.ServerResponse) =>
  new Promise<void>((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });

async function writeAll(res: http.ServerResponse, pieces: Iterable<Buffer | string>): Promise<void> {
  for (const piece of pieces) {
    if (res.destroyed) return;
    if (!res.write(piece)) await writable(res);
  }
  res.end();
}

function* sseEvents(format: string, samples: number, characters: number): Generator<string> {
  for (const piece of audioPieces(format, samples)) yield `data: ${JSON.stringify({ type: "speech.audio.delta", audio: piece.toString("base64") })}\n\n`;
  // A token per 4 characters, at least 1, as the sim counts prompts (request.ts).
  const input = Math.max(1, Math.ceil(characters / 4));
  const output = Math.ceil(samples / SAMPLES_PER_AUDIO_TOKEN);
  yield `data: ${JSON.stringify({ type: "speech.audio.done", usage: { input_tokens: input, output_tokens: output, total_tokens: input + output } })}\n\n`;
}

/** Reads the JSON body and answers it: an error at once, else the audio (or its events) as it is written. */
export async function speak(req: http.IncomingMessage, res: http.ServerResponse, replies: Replies, reqId: string | undefined): Promise<void> {
  const ask = readAsk(await readJson(req));
  if ("message" in ask) return replies.sendError(res, 400, ask.message, ask.param, reqId);
  const samples = speechSamples(ask.characters, ask.speed);
  const headers: Record<string, string | number> = ask.sse ? { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" } : { "content-type": TYPES[ask.format]!, "content-length": samples * 2 + (ask.format === "wav" ? 44 : 0) };
  if (reqId !== undefined) headers["x-request-id"] = reqId;
  if (replies.stopping) headers.connection = "close";
  res.writeHead(200, headers);
  await writeAll(res, ask.sse ? sseEvents(ask.format, samples, ask.characters) : audioPieces(ask.format, samples));
}
