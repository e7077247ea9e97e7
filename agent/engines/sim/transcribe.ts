// The sim as a speech-to-text engine, on OpenAI's POST /v1/audio/transcriptions (as vLLM serves it
// with a Whisper model) and on whisper.cpp's server's POST /inference (its multipart protocol:
// file, response_format json|text|srt|vtt|verbose_json, language, prompt, temperature…; errors as
// `{"error": "…"}`; text typed text/html, srt application/x-subrip, vtt text/vtt, as it types them).
// The transcript is fixed by the audio's length: 2 words a second (at least 1) of a fixed sentence,
// in segments of 5 s. The length is a WAV file's (its header), else the bytes at 16 kHz 16-bit mono.
import type http from "node:http";
import busboy from "busboy";

const WORDS = "the quick brown fox jumps over the lazy dog".split(" ");
const SEGMENT_S = 5;

export interface Transcribed {
  status: number;
  type: string;
  body: string;
}

/** Seconds of audio: a RIFF/WAVE file's data chunk over its byte rate, else 32000 bytes a second. */
export function audioSeconds(b: Buffer): number {
  if (b.length >= 44 && b.toString("ascii", 0, 4) === "RIFF" && b.toString("ascii", 8, 12) === "WAVE") {
    const byteRate = b.readUInt32LE(28);
    let at = 12;
    while (at + 8 <= b.length) {
      const id = b.toString("ascii", at, at + 4);
      const size = b.readUInt32LE(at + 4);
      if (id === "data" && byteRate > 0) return Math.min(size, b.length - at - 8) / byteRate;
      at += 8 + size + (size % 2);
    }
  }
  return b.length / 32000;
}

/** The fixed transcript of so many seconds, as segments. */
export function transcript(seconds: number): { start: number; end: number; text: string }[] {
  const words = Math.max(1, Math.round(seconds * 2));
  const out: { start: number; end: number; text: string }[] = [];
  for (let w = 0; w < words; w += SEGMENT_S * 2) {
    const n = Math.min(SEGMENT_S * 2, words - w);
    const text = Array.from({ length: n }, (_, i) => WORDS[(w + i) % WORDS.length]).join(" ");
    out.push({ start: w / 2, end: Math.min(seconds, (w + n) / 2), text });
  }
  return out;
}

const stamp = (s: number, sep: string) => {
  const ms = Math.round(s * 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${sep}${pad(ms % 1000, 3)}`;
};

/** Reads the form and answers it; `whisperCpp`: in whisper.cpp's server's shapes, else OpenAI's. */
export function transcribe(req: http.IncomingMessage, whisperCpp: boolean): Promise<Transcribed> {
  const fail = (message: string): Transcribed =>
    whisperCpp ? { status: 400, type: "application/json", body: JSON.stringify({ error: message }) } : { status: 400, type: "application/json", body: JSON.stringify({ error: { message, type: "invalid_request_error", param: null, code: null } }) };
  return new Promise((resolve) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: req.headers, limits: { files: 1, fileSize: 64 * 1024 * 1024 } });
    } catch {
      req.resume();
      return resolve(fail("the body is not multipart/form-data"));
    }
    const fields: Record<string, string> = {};
    const parts: Buffer[] = [];
    let file = false;
    bb.on("field", (k, v) => (fields[k] = v));
    bb.on("file", (name, stream) => {
      if (name !== "file") return void stream.resume();
      file = true;
      stream.on("data", (c: Buffer) => parts.push(c));
    });
    bb.on("error", () => resolve(fail("the multipart body is malformed")));
    bb.on("close", () => {
      if (!file) return resolve(fail(whisperCpp ? "no 'file' field in the request" : "file is required"));
      const format = fields.response_format ?? "json";
      const seconds = audioSeconds(Buffer.concat(parts));
      const segs = transcript(seconds);
      const text = segs.map((s) => s.text).join(" ");
      const plain = whisperCpp ? "text/html; charset=utf-8" : "text/plain; charset=utf-8";
      if (format === "json") resolve({ status: 200, type: "application/json", body: JSON.stringify(whisperCpp ? { text } : { text, usage: { type: "duration", seconds: Math.ceil(seconds) } }) });
      else if (format === "text") resolve({ status: 200, type: plain, body: `${text}\n` });
      else if (format === "srt") resolve({ status: 200, type: whisperCpp ? "application/x-subrip" : plain, body: segs.map((s, i) => `${i + 1}\n${stamp(s.start, ",")} --> ${stamp(s.end, ",")}\n${s.text}\n\n`).join("") });
      else if (format === "vtt") resolve({ status: 200, type: whisperCpp ? "text/vtt" : plain, body: `WEBVTT\n\n${segs.map((s) => `${stamp(s.start, ".")} --> ${stamp(s.end, ".")}\n${s.text}\n\n`).join("")}` });
      else if (format === "verbose_json") {
        const segments = segs.map((s, id) => ({ id, seek: 0, start: s.start, end: s.end, text: s.text, tokens: [], temperature: 0, avg_logprob: 0, compression_ratio: 1, no_speech_prob: 0 }));
        resolve({ status: 200, type: "application/json", body: JSON.stringify({ task: "transcribe", language: fields.language ?? "en", duration: seconds, text, segments }) });
      } else resolve(fail(`unsupported response_format '${format}'`));
    });
    req.pipe(bb);
  });
}
