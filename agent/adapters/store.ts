// LoRA adapters on a node: files arrive in bounded chunks (PutAdapter), kept by their sha256 under
// <dir>/<sha256>/ as the folder vLLM's /v1/load_lora_adapter reads — adapter_model.safetensors and
// the adapter_config.json that PEFT writes beside it, derived here from the safetensors header
// because the training artifact is the weights file alone.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";

export const MAX_ADAPTER_CHUNK = 1 << 20;
const SHA = /^[0-9a-f]{64}$/;
const WEIGHTS = "adapter_model.safetensors";
const CONFIG = "adapter_config.json";
const HEADER_MAX = 16 << 20;

export class AdapterError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
  }
}

export class AdapterStore {
  constructor(private readonly dir: string) {}

  /** The adapter's folder once complete, else null. */
  folder(sha256: string): string | null {
    if (!SHA.test(sha256)) throw new AdapterError(grpc.status.INVALID_ARGUMENT, "sha256 must be 64 lowercase hex digits");
    const d = path.join(this.dir, sha256);
    return fs.existsSync(path.join(d, CONFIG)) ? d : null;
  }

  /** Appends one chunk at `offset` (which must be what is held); checks and completes at the end. */
  put(req: { sha256: string; offset: number; data: Buffer; total: number }): { received: number; complete: boolean; path: string } {
    const done = this.folder(req.sha256);
    if (done) return { received: req.total, complete: true, path: done };
    if (req.data.length > MAX_ADAPTER_CHUNK) throw new AdapterError(grpc.status.INVALID_ARGUMENT, `a chunk holds at most ${MAX_ADAPTER_CHUNK} bytes`);
    if (!(req.total > 0)) throw new AdapterError(grpc.status.INVALID_ARGUMENT, "total must be positive");
    const d = path.join(this.dir, req.sha256);
    const part = path.join(d, `${WEIGHTS}.part`);
    fs.mkdirSync(d, { recursive: true });
    const held = fs.existsSync(part) ? fs.statSync(part).size : 0;
    // A retried chunk (or one from a restarted sender) is answered with what is held, not written twice.
    if (req.offset !== held) return { received: held, complete: false, path: "" };
    if (held + req.data.length > req.total) throw new AdapterError(grpc.status.INVALID_ARGUMENT, `${held + req.data.length} bytes exceed the total ${req.total}`);
    fs.appendFileSync(part, req.data, { mode: 0o640 });
    const received = held + req.data.length;
    if (received < req.total) return { received, complete: false, path: "" };
    const sha = createHash("sha256").update(fs.readFileSync(part)).digest("hex");
    if (sha !== req.sha256) {
      fs.rmSync(part);
      throw new AdapterError(grpc.status.DATA_LOSS, `the adapter's sha256 is ${sha}, not ${req.sha256}; send it again`);
    }
    const config = peftConfig(part);
    fs.renameSync(part, path.join(d, WEIGHTS));
    fs.writeFileSync(path.join(d, CONFIG), JSON.stringify(config, null, 2));
    return { received, complete: true, path: d };
  }
}

/** PEFT's adapter_config.json from a LoRA safetensors file: rank and target modules from the tensors. */
export function peftConfig(file: string): Record<string, unknown> {
  const fd = fs.openSync(file, "r");
  let header: Record<string, { shape?: number[] } & Record<string, unknown>>;
  try {
    const len = Buffer.alloc(8);
    fs.readSync(fd, len, 0, 8, 0);
    const n = Number(len.readBigUInt64LE(0));
    if (!(n > 0 && n < HEADER_MAX)) throw new Error(`header length ${n}`);
    const buf = Buffer.alloc(n);
    fs.readSync(fd, buf, 0, n, 8);
    header = JSON.parse(buf.toString("utf8")) as typeof header;
  } catch (err) {
    throw new AdapterError(grpc.status.INVALID_ARGUMENT, `the adapter is not a safetensors file: ${(err as Error).message}`);
  } finally {
    fs.closeSync(fd);
  }
  const meta = (header.__metadata__ ?? {}) as Record<string, string>;
  const modules = new Set<string>();
  let rank = 0;
  for (const [name, t] of Object.entries(header)) {
    const m = /\.([A-Za-z0-9_]+)\.lora_A(?:\.[A-Za-z0-9_]+)?\.weight$/.exec(name);
    if (!m) continue;
    modules.add(m[1]!);
    rank = Math.max(rank, t.shape?.[0] ?? 0);
  }
  if (modules.size === 0) throw new AdapterError(grpc.status.INVALID_ARGUMENT, "the adapter holds no LoRA tensors (…lora_A.weight)");
  return {
    peft_type: "LORA",
    task_type: "CAUSAL_LM",
    base_model_name_or_path: meta.base_model ?? "",
    r: rank,
    // The trainer's alpha when it wrote it into the metadata; else PEFT's usual 2 × rank.
    lora_alpha: Number(meta.lora_alpha) || 2 * rank,
    lora_dropout: 0,
    bias: "none",
    target_modules: [...modules].sort(),
  };
}
