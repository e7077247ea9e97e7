// The stand-in trainer for machines without a GPU (tests, development): it speaks the same
// protocol as scripts/trainers/lora.py and writes a real artifact, a safetensors file holding LoRA
// A/B matrices of the asked rank, so everything after it (chunked transfer, checksums, download)
// runs for real.
//
//   node --import tsx scripts/trainers/standin.ts --data pairs.ndjson --out DIR --base MODEL --params '{"rank":8}'
//
// Protocol: one JSON object a line on stdout —
//   {"event":"start","steps":N}
//   {"event":"step","step":i,"steps":N,"loss":x,"peak_memory_mib":m}   (once per step)
//   {"event":"done","artifact":"adapter_model.safetensors","bytes":n}
//   {"event":"error","message":"..."}                                   (then a non-zero exit)
// Stand-in only: params.step_ms (default 100) is how long a step takes.
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";

const emit = (o: Record<string, unknown>) => process.stdout.write(JSON.stringify(o) + "\n");

const { values } = parseArgs({ options: { data: { type: "string" }, out: { type: "string" }, base: { type: "string" }, params: { type: "string", default: "{}" }, gguf: { type: "boolean" } } });
if (!values.data || !values.out) {
  emit({ event: "error", message: "--data and --out are required" });
  process.exit(2);
}
const params = JSON.parse(values.params) as { rank?: number; epochs?: number; batch_size?: number; step_ms?: number };
const rank = params.rank ?? 8;
const epochs = params.epochs ?? 2;
const batch = params.batch_size ?? 4;
const stepMs = params.step_ms ?? 100;
const pairs = fs.readFileSync(values.data, "utf8").split("\n").filter((l) => l.trim() !== "").length;
const steps = epochs * Math.max(1, Math.ceil(pairs / batch));
const HIDDEN = 64;

/** safetensors: an 8-byte little-endian header length, the JSON header, then the raw tensors. */
function safetensors(tensors: Record<string, { shape: number[]; data: Float32Array }>): Buffer {
  const header: Record<string, unknown> = { __metadata__: { format: "pt", base_model: values.base ?? "", trainer: "llmgw-standin" } };
  let offset = 0;
  for (const [name, t] of Object.entries(tensors)) {
    header[name] = { dtype: "F32", shape: t.shape, data_offsets: [offset, offset + t.data.byteLength] };
    offset += t.data.byteLength;
  }
  let json = JSON.stringify(header);
  json += " ".repeat((8 - (json.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([len, Buffer.from(json), ...Object.values(tensors).map((t) => Buffer.from(t.data.buffer))]);
}

/** Deterministic values, so the same run writes the same bytes. */
function matrix(rows: number, cols: number, seed: number): Float32Array {
  const a = new Float32Array(rows * cols);
  let x = seed;
  for (let i = 0; i < a.length; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    a[i] = x / 2 ** 31 - 0.5;
  }
  return a;
}

process.on("SIGTERM", () => process.exit(143));
emit({ event: "start", steps });
let step = 0;
const tick = () => {
  step += 1;
  emit({ event: "step", step, steps, loss: Number((2.5 * Math.exp(-step / Math.max(1, steps / 3))).toFixed(4)), peak_memory_mib: 512 + rank * 4 });
  if (step < steps) return void setTimeout(tick, stepMs);
  const tensors: Record<string, { shape: number[]; data: Float32Array }> = {};
  for (const proj of ["q_proj", "v_proj"]) {
    tensors[`base_model.model.layers.0.self_attn.${proj}.lora_A.weight`] = { shape: [rank, HIDDEN], data: matrix(rank, HIDDEN, proj.length + rank) };
    tensors[`base_model.model.layers.0.self_attn.${proj}.lora_B.weight`] = { shape: [HIDDEN, rank], data: matrix(HIDDEN, rank, proj.length * 7 + rank) };
  }
  fs.mkdirSync(values.out!, { recursive: true });
  const file = path.join(values.out!, "adapter_model.safetensors");
  const bytes = safetensors(tensors);
  fs.writeFileSync(file, bytes);
  emit({ event: "done", artifact: path.basename(file), bytes: bytes.length });
};
setTimeout(tick, stepMs);
