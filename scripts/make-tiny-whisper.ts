// Writes a tiny Whisper model (2 encoder and 3 decoder layers, 32 wide; matrices and convolutions
// F16, the rest F32) in whisper.cpp's legacy ggml `.bin` format, which whisper.cpp's loader reads
// (src/whisper.cpp, whisper_model_load; tensor names and shapes as models/convert-pt-to-ggml.py
// writes them), so a test runs the real whisper-server without downloading a model.
//
//   node --import tsx scripts/make-tiny-whisper.ts OUT.bin
//
// The weights are seeded random, except a few that script the decoder: with only random weights
// the decoder is unsure of every token, so whisper.cpp retries each 30 s window at 5 higher
// temperatures (sampling 2 candidates each, whisper-server's best_of) and a 2 s file took minutes.
// Here the last decoder layer's MLP maps each token of one sequence to the next with near
// certainty: <|0.00|> " hello from whisper" <|1.00|> <|endoftext|>. So each 30 s window of audio
// transcribes to one segment of that text, 0 s to 1 s, at temperature 0 and with no fallback, in
// about a second; the encoder runs, but its output does not change the text.
//
// It is an English-only model: n_vocab 51864, the smallest whisper.cpp takes (its special tokens
// sit at fixed ids below it; 1500 timestamp tokens above them). The file holds the 50256 text
// tokens, ASCII words, so a transcript is valid UTF-8; the loader fills in the special tokens.
import fs from "node:fs";
import { pathToFileURL } from "node:url";
import { rng } from "./make-tiny-gguf.ts";

const MAGIC = 0x67676d6c; // "ggml"
const N_VOCAB = 51864;
const N_TEXT_TOKENS = 50256; // below the end-of-text token
const N_STATE = 32;
const N_HEAD = 2;
const N_AUDIO_LAYER = 2;
/** Not 2: whisper.cpp takes a 2-layer decoder for distil-whisper's and turns timestamps off. */
const N_TEXT_LAYER = 3;
const N_AUDIO_CTX = 1500; // 30 s of audio, as whisper.cpp's windows assume
const N_TEXT_CTX = 448;
const N_MELS = 80;
const N_FFT_BINS = 201; // 400-point FFT
const GGML_F32 = 0;
const GGML_F16 = 1;
/** The file's ftype: mostly F16. An all-F32 file loads but aborts in the encoder (ggml's conv_1d
 * makes its im2col F16, which needs an F16 kernel). */
const FTYPE_MOSTLY_F16 = 1;

// English-only ids (whisper.cpp's whisper_vocab).
const EOT = 50256;
const SOT = 50257;
const BEG = 50363; // <|0.00|>; each timestamp token is 20 ms more
/** The transcript of each 30 s window, tokens 1.. of the vocabulary. */
export const SCRIPT_WORDS = ["hello", "from", "whisper"];
/** The scripted sequence: each token's embedding is one-hot in its own dimension, below RESERVED. */
const CHAIN = [SOT, BEG, ...SCRIPT_WORDS.map((_, i) => i + 1), BEG + 50, EOT];
const RESERVED = 8;
/** A scripted token's embedding: its logit after the final layer norm is SCALE * sqrt(31), about
 * 22, against about 0 for the others, so it is chosen with probability 1 - 1e-5. */
const SCALE = 4;

const SYLLABLES = "ba be bi bo bu da de di do du ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu ra re ri ro ru sa se si so su ta te ti to tu".split(" ");

/** Token i's text: token 0 is " " (the decoder looks it up), then the script's words, then a space
 * and a word of two or three syllables, unique per token. */
function token(i: number): string {
  if (i === 0) return " ";
  if (i <= SCRIPT_WORDS.length) return ` ${SCRIPT_WORDS[i - 1]!}`;
  const n = SYLLABLES.length;
  const word = SYLLABLES[i % n]! + SYLLABLES[Math.floor(i / n) % n]! + (i >= n * n ? SYLLABLES[Math.floor(i / (n * n)) % n]! : "");
  return ` ${word}`;
}

/** Triangular filters spread evenly over the FFT bins: input audio changes the mel input. */
function melFilters(): Float32Array {
  const f = new Float32Array(N_MELS * N_FFT_BINS);
  const step = (N_FFT_BINS - 1) / (N_MELS + 1);
  for (let m = 0; m < N_MELS; m++) {
    const centre = (m + 1) * step;
    for (let k = 0; k < N_FFT_BINS; k++) f[m * N_FFT_BINS + k] = Math.max(0, 1 - Math.abs(k - centre) / step);
  }
  return f;
}

interface Tensor {
  name: string;
  /** ggml order: ne[0] is the row length. */
  ne: number[];
  data: Float32Array;
  f16: boolean;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
/** IEEE half bits of x, truncated; what is too small for a normal half is 0 (no weight here is over 65504). */
function half(x: number): number {
  f32[0] = x;
  const b = u32[0]!;
  const exp = ((b >>> 23) & 0xff) - 127 + 15;
  const sign = (b >>> 16) & 0x8000;
  return exp <= 0 ? sign : sign | (exp << 10) | ((b >>> 13) & 0x3ff);
}

/**
 * The last decoder layer's MLP, as [mlp.0.weight, mlp.0.bias, mlp.2.weight]: hidden unit k fires
 * when the token in is CHAIN[k] and moves the residual stream from CHAIN[k]'s dimension to
 * CHAIN[k + 1]'s. A layer norm makes a one-hot input sqrt(n - 1) in its dimension and
 * -1/sqrt(n - 1) in the others; the other units stay off.
 */
function scriptMlp(n: number): [Float32Array, Float32Array, Float32Array] {
  const hot = Math.sqrt(n - 1);
  const gate = 2;
  const fired = (gate * hot) / 2;
  const w1 = new Float32Array(n * 4 * n); // row k (a hidden unit) at k * n
  const b1 = new Float32Array(4 * n).fill(-gate * hot);
  const w2 = new Float32Array(4 * n * n); // row o (an output dimension) at o * 4n
  for (let k = 0; k + 1 < CHAIN.length; k++) {
    w1[k * n + k] = gate;
    b1[k] = -fired;
    w2[(k + 1) * 4 * n + k] = SCALE / fired;
    w2[k * 4 * n + k] = -SCALE / fired;
  }
  return [w1, b1, w2];
}

function tensors(seed: number): Tensor[] {
  const r = rng(seed);
  const n = N_STATE;
  const out: Tensor[] = [];
  // As whisper.cpp's loader types them: matrices and convolution kernels F16, the rest F32.
  const put = (name: string, ne: number[], data: Float32Array) =>
    out.push({ name, ne, data, f16: ne.length > 1 && ne[0] !== 1 && !name.endsWith("positional_embedding") });
  const random = (name: string, ne: number[], scale: number) => {
    const d = new Float32Array(ne.reduce((a, b) => a * b, 1));
    for (let i = 0; i < d.length; i++) d[i] = (r() * 2 - 1) * scale;
    put(name, ne, d);
  };
  const fill = (name: string, ne: number[], v: number) => put(name, ne, new Float32Array(ne.reduce((a, b) => a * b, 1)).fill(v));
  const w = 1 / Math.sqrt(n);
  // A decoder layer's out projections are 100 times smaller, so what it adds to the residual
  // stream does not drown the script's one-hot embeddings.
  const block = (prefix: string, decoder: boolean, script = false) => {
    const quiet = decoder ? 0.01 : 1;
    const attn = (a: string) => {
      fill(`${prefix}.${a}_ln.weight`, [n], 1);
      fill(`${prefix}.${a}_ln.bias`, [n], 0);
      random(`${prefix}.${a}.query.weight`, [n, n], w);
      random(`${prefix}.${a}.query.bias`, [n], 0.1);
      random(`${prefix}.${a}.key.weight`, [n, n], w);
      random(`${prefix}.${a}.value.weight`, [n, n], w);
      random(`${prefix}.${a}.value.bias`, [n], 0.1);
      random(`${prefix}.${a}.out.weight`, [n, n], w * quiet);
      random(`${prefix}.${a}.out.bias`, [n], 0.1 * quiet);
    };
    attn("attn");
    if (decoder) attn("cross_attn");
    fill(`${prefix}.mlp_ln.weight`, [n], 1);
    fill(`${prefix}.mlp_ln.bias`, [n], 0);
    if (script) {
      const [w1, b1, w2] = scriptMlp(n);
      put(`${prefix}.mlp.0.weight`, [n, 4 * n], w1);
      put(`${prefix}.mlp.0.bias`, [4 * n], b1);
      put(`${prefix}.mlp.2.weight`, [4 * n, n], w2);
      fill(`${prefix}.mlp.2.bias`, [n], 0);
    } else {
      random(`${prefix}.mlp.0.weight`, [n, 4 * n], w);
      random(`${prefix}.mlp.0.bias`, [4 * n], 0.1);
      random(`${prefix}.mlp.2.weight`, [4 * n, n], quiet / Math.sqrt(4 * n));
      random(`${prefix}.mlp.2.bias`, [n], 0.1 * quiet);
    }
  };
  random("encoder.positional_embedding", [n, N_AUDIO_CTX], 0.5);
  random("encoder.conv1.weight", [3, N_MELS, n], 1 / Math.sqrt(3 * N_MELS));
  random("encoder.conv1.bias", [1, n], 0.1); // conv biases are [n, 1] in the file
  random("encoder.conv2.weight", [3, n, n], 1 / Math.sqrt(3 * n));
  random("encoder.conv2.bias", [1, n], 0.1);
  for (let l = 0; l < N_AUDIO_LAYER; l++) block(`encoder.blocks.${l}`, false);
  fill("encoder.ln_post.weight", [n], 1);
  fill("encoder.ln_post.bias", [n], 0);
  random("decoder.positional_embedding", [n, N_TEXT_CTX], 0.02);
  // Tokens off the script: random in the dimensions the script does not use.
  random("decoder.token_embedding.weight", [n, N_VOCAB], 0.1);
  const embd = out.at(-1)!.data;
  for (let t = 0; t < N_VOCAB; t++) embd.fill(0, t * n, t * n + RESERVED);
  CHAIN.forEach((t, k) => {
    embd.fill(0, t * n, (t + 1) * n);
    embd[t * n + k] = SCALE;
  });
  for (let l = 0; l < N_TEXT_LAYER; l++) block(`decoder.blocks.${l}`, true, l === N_TEXT_LAYER - 1);
  fill("decoder.ln.weight", [n], 1);
  fill("decoder.ln.bias", [n], 0);
  return out;
}

/** The model file's bytes. */
export function tinyWhisper(seed = 1): Buffer {
  const parts: Buffer[] = [];
  const i32s = (...xs: number[]) => {
    const b = Buffer.alloc(4 * xs.length);
    xs.forEach((x, i) => b.writeInt32LE(x, 4 * i));
    parts.push(b);
  };
  const f32s = (a: Float32Array) => parts.push(Buffer.from(a.buffer, a.byteOffset, a.byteLength));
  const f16s = (a: Float32Array) => parts.push(Buffer.from(Uint16Array.from(a, half).buffer));
  i32s(MAGIC, N_VOCAB, N_AUDIO_CTX, N_STATE, N_HEAD, N_AUDIO_LAYER, N_TEXT_CTX, N_STATE, N_HEAD, N_TEXT_LAYER, N_MELS, FTYPE_MOSTLY_F16);
  i32s(N_MELS, N_FFT_BINS);
  f32s(melFilters());
  i32s(N_TEXT_TOKENS);
  for (let i = 0; i < N_TEXT_TOKENS; i++) {
    const t = Buffer.from(token(i), "ascii");
    i32s(t.length);
    parts.push(t);
  }
  for (const t of tensors(seed)) {
    const name = Buffer.from(t.name, "ascii");
    i32s(t.ne.length, name.length, t.f16 ? GGML_F16 : GGML_F32, ...t.ne);
    parts.push(name);
    if (t.f16) f16s(t.data);
    else f32s(t.data);
  }
  return Buffer.concat(parts);
}

/** Writes the model to `file` (once: an existing file is kept) and returns the path. */
export function writeTinyWhisper(file: string, seed = 1): string {
  if (!fs.existsSync(file)) {
    fs.writeFileSync(`${file}.tmp`, tinyWhisper(seed));
    fs.renameSync(`${file}.tmp`, file);
  }
  return file;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const out = process.argv[2];
  if (!out) {
    process.stderr.write("usage: node --import tsx scripts/make-tiny-whisper.ts OUT.bin\n");
    process.exit(2);
  }
  fs.rmSync(out, { force: true });
  writeTinyWhisper(out);
  process.stdout.write(`${out}\n`);
}
