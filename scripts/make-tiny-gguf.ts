// Writes a tiny llama-architecture GGUF (2 layers, 64 wide, a few hundred tokens, seeded random F32
// weights, a SentencePiece-style vocabulary and a ChatML template) that llama.cpp loads, so tests
// run a real engine without downloading a model.
//
//   node --import tsx scripts/make-tiny-gguf.ts OUT.gguf
//
// The file is the same for the same seed. Byte and control tokens get all-zero output rows, so at
// temperature 0 the model always picks a text token: answers are valid UTF-8 and run to max_tokens.
import fs from "node:fs";
import { pathToFileURL } from "node:url";

const N_EMBD = 64;
const N_FF = 128;
const N_LAYER = 2;
const N_HEAD = 4;
const N_CTX = 512;
const ALIGN = 32;

// GGUF value types and token types (ggml/gguf.h, llama-vocab.h).
const T = { U32: 4, I32: 5, F32: 6, BOOL: 7, STRING: 8, ARRAY: 9 } as const;
const TOKEN = { NORMAL: 1, UNKNOWN: 2, CONTROL: 3, BYTE: 6 } as const;
const GGML_F32 = 0;

const CHATML =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

const WORDS = "the be to of and a in that have it for not on with as you do at this but by from say hello world tell me about model answer yes no".split(" ");

interface Vocab {
  tokens: string[];
  scores: number[];
  types: number[];
}

function vocab(): Vocab {
  const v: Vocab = { tokens: [], scores: [], types: [] };
  const add = (t: string, type: number, score = 0) => {
    v.tokens.push(t);
    v.scores.push(score);
    v.types.push(type);
  };
  add("<unk>", TOKEN.UNKNOWN);
  add("<s>", TOKEN.CONTROL);
  add("</s>", TOKEN.CONTROL);
  add("<|im_start|>", TOKEN.CONTROL);
  add("<|im_end|>", TOKEN.CONTROL);
  // Byte fallback: SentencePiece spells any character it has no piece for as these.
  for (let b = 0; b < 256; b++) add(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`, TOKEN.BYTE);
  const pieces = new Set<string>(["▁"]);
  for (const c of "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?'-:;") pieces.add(c);
  for (const c of "abcdefghijklmnopqrstuvwxyz") pieces.add(`▁${c}`);
  for (const w of WORDS) pieces.add(`▁${w}`);
  // Longer pieces score higher, so the tokenizer prefers whole words.
  for (const p of pieces) add(p, TOKEN.NORMAL, p.length - v.tokens.length / 1000);
  return v;
}

/** mulberry32: small, seeded, the same on every machine. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Tensor {
  name: string;
  /** ggml order: ne[0] is the row length. */
  ne: number[];
  data: Float32Array;
}

function tensors(nVocab: number, textFrom: number, seed: number): Tensor[] {
  const r = rng(seed);
  const random = (ne: number[], scale: number) => {
    const d = new Float32Array(ne.reduce((a, b) => a * b, 1));
    for (let i = 0; i < d.length; i++) d[i] = (r() * 2 - 1) * scale;
    return d;
  };
  const ones = (n: number) => new Float32Array(n).fill(1);
  const out = random([N_EMBD, nVocab], 0.5);
  // Rows of byte and control tokens stay 0: a text token's logit is almost surely higher.
  out.fill(0, 0, textFrom * N_EMBD);
  const list: Tensor[] = [
    { name: "token_embd.weight", ne: [N_EMBD, nVocab], data: random([N_EMBD, nVocab], 1) },
    { name: "output_norm.weight", ne: [N_EMBD], data: ones(N_EMBD) },
    { name: "output.weight", ne: [N_EMBD, nVocab], data: out },
  ];
  for (let l = 0; l < N_LAYER; l++) {
    const b = `blk.${l}.`;
    const w = 1 / Math.sqrt(N_EMBD);
    list.push(
      { name: `${b}attn_norm.weight`, ne: [N_EMBD], data: ones(N_EMBD) },
      { name: `${b}attn_q.weight`, ne: [N_EMBD, N_EMBD], data: random([N_EMBD, N_EMBD], w) },
      { name: `${b}attn_k.weight`, ne: [N_EMBD, N_EMBD], data: random([N_EMBD, N_EMBD], w) },
      { name: `${b}attn_v.weight`, ne: [N_EMBD, N_EMBD], data: random([N_EMBD, N_EMBD], w) },
      { name: `${b}attn_output.weight`, ne: [N_EMBD, N_EMBD], data: random([N_EMBD, N_EMBD], w) },
      { name: `${b}ffn_norm.weight`, ne: [N_EMBD], data: ones(N_EMBD) },
      { name: `${b}ffn_gate.weight`, ne: [N_EMBD, N_FF], data: random([N_EMBD, N_FF], w) },
      { name: `${b}ffn_up.weight`, ne: [N_EMBD, N_FF], data: random([N_EMBD, N_FF], w) },
      { name: `${b}ffn_down.weight`, ne: [N_FF, N_EMBD], data: random([N_FF, N_EMBD], 1 / Math.sqrt(N_FF)) },
    );
  }
  return list;
}

/** Little-endian GGUF v3 writer, enough for strings, numbers, bools and arrays of them. */
class Writer {
  private chunks: Buffer[] = [];
  size = 0;
  private push(b: Buffer): void {
    this.chunks.push(b);
    this.size += b.length;
  }
  u32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    this.push(b);
  }
  i32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(n);
    this.push(b);
  }
  u64(n: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(n));
    this.push(b);
  }
  f32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(n);
    this.push(b);
  }
  str(s: string): void {
    const b = Buffer.from(s, "utf8");
    this.u64(b.length);
    this.push(b);
  }
  bytes(b: Buffer): void {
    this.push(b);
  }
  pad(): void {
    const n = (ALIGN - (this.size % ALIGN)) % ALIGN;
    if (n) this.push(Buffer.alloc(n));
  }
  buffer(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

type Kv =
  | { key: string; u32: number }
  | { key: string; f32: number }
  | { key: string; bool: boolean }
  | { key: string; str: string }
  | { key: string; strs: string[] }
  | { key: string; f32s: number[] }
  | { key: string; i32s: number[] };

function writeKv(w: Writer, kv: Kv): void {
  w.str(kv.key);
  const array = (type: number, n: number) => {
    w.u32(T.ARRAY);
    w.u32(type);
    w.u64(n);
  };
  if ("u32" in kv) {
    w.u32(T.U32);
    w.u32(kv.u32);
  } else if ("f32" in kv) {
    w.u32(T.F32);
    w.f32(kv.f32);
  } else if ("bool" in kv) {
    w.u32(T.BOOL);
    w.bytes(Buffer.from([kv.bool ? 1 : 0]));
  } else if ("str" in kv) {
    w.u32(T.STRING);
    w.str(kv.str);
  } else if ("strs" in kv) {
    array(T.STRING, kv.strs.length);
    for (const x of kv.strs) w.str(x);
  } else if ("f32s" in kv) {
    array(T.F32, kv.f32s.length);
    for (const x of kv.f32s) w.f32(x);
  } else {
    array(T.I32, kv.i32s.length);
    for (const x of kv.i32s) w.i32(x);
  }
}

/** The GGUF file's bytes. */
export function tinyGguf(seed = 1): Buffer {
  const v = vocab();
  const textFrom = v.types.findIndex((t) => t === TOKEN.NORMAL);
  const ts = tensors(v.tokens.length, textFrom, seed);
  const kvs: Kv[] = [
    { key: "general.architecture", str: "llama" },
    { key: "general.name", str: "llmgw-tiny" },
    { key: "general.file_type", u32: 0 },
    { key: "general.alignment", u32: ALIGN },
    { key: "llama.context_length", u32: N_CTX },
    { key: "llama.embedding_length", u32: N_EMBD },
    { key: "llama.block_count", u32: N_LAYER },
    { key: "llama.feed_forward_length", u32: N_FF },
    { key: "llama.attention.head_count", u32: N_HEAD },
    { key: "llama.attention.head_count_kv", u32: N_HEAD },
    { key: "llama.rope.dimension_count", u32: N_EMBD / N_HEAD },
    { key: "llama.attention.layer_norm_rms_epsilon", f32: 1e-5 },
    { key: "llama.vocab_size", u32: v.tokens.length },
    { key: "tokenizer.ggml.model", str: "llama" },
    { key: "tokenizer.ggml.tokens", strs: v.tokens },
    { key: "tokenizer.ggml.scores", f32s: v.scores },
    { key: "tokenizer.ggml.token_type", i32s: v.types },
    { key: "tokenizer.ggml.unknown_token_id", u32: 0 },
    { key: "tokenizer.ggml.bos_token_id", u32: 1 },
    { key: "tokenizer.ggml.eos_token_id", u32: 4 },
    { key: "tokenizer.ggml.add_bos_token", bool: true },
    { key: "tokenizer.ggml.add_eos_token", bool: false },
    { key: "tokenizer.chat_template", str: CHATML },
  ];
  const w = new Writer();
  w.bytes(Buffer.from("GGUF", "ascii"));
  w.u32(3);
  w.u64(ts.length);
  w.u64(kvs.length);
  for (const kv of kvs) writeKv(w, kv);
  let offset = 0;
  for (const t of ts) {
    w.str(t.name);
    w.u32(t.ne.length);
    for (const n of t.ne) w.u64(n);
    w.u32(GGML_F32);
    w.u64(offset);
    offset += Math.ceil(t.data.byteLength / ALIGN) * ALIGN;
  }
  w.pad();
  for (const t of ts) {
    w.bytes(Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    w.pad();
  }
  return w.buffer();
}

/** Writes the model to `file` (once: an existing file is kept) and returns the path. */
export function writeTinyGguf(file: string, seed = 1): string {
  if (!fs.existsSync(file)) {
    fs.writeFileSync(`${file}.tmp`, tinyGguf(seed));
    fs.renameSync(`${file}.tmp`, file);
  }
  return file;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const out = process.argv[2];
  if (!out) {
    process.stderr.write("usage: node --import tsx scripts/make-tiny-gguf.ts OUT.gguf\n");
    process.exit(2);
  }
  fs.rmSync(out, { force: true });
  writeTinyGguf(out);
  process.stdout.write(`${out}\n`);
}
