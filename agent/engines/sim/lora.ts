// The sim's LoRA adapters, loaded at run time through vLLM's API: POST /v1/load_lora_adapter and
// /v1/unload_lora_adapter with {"lora_name", "lora_path"}, vLLM's answers and errors included. A
// loaded adapter is listed in /v1/models with its base as `parent`, and requests may name it as
// their model. Each load is recorded (start, end) and served on GET /debug/lora, so a test can see
// how loads on several replicas followed one another.
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";

const loadBody = z.object({ lora_name: z.string().min(1), lora_path: z.string().min(1) });
const unloadBody = z.object({ lora_name: z.string().min(1), lora_int_id: z.number().int().optional() });

export interface LoraLoad {
  name: string;
  path: string;
  startedAtMs: number;
  endedAtMs: number;
}

/** An answer in vLLM's shape: plain text on success, an OpenAI error body otherwise. */
export interface LoraAnswer {
  status: number;
  body: string;
  type: "text" | "json";
}

const error = (status: number, message: string, type: string): LoraAnswer => ({
  status,
  body: JSON.stringify({ error: { message, type, param: null, code: status }, object: "error", message, type, param: null, code: status }),
  type: "json",
});

export class SimLoras {
  private readonly loaded = new Map<string, { path: string; created: number }>();
  readonly loads: LoraLoad[] = [];
  readonly requests = new Map<string, number>();

  /** `loadMs`: how long a load takes (the engine reading the weights), so overlapping loads show. */
  constructor(private readonly loadMs: number) {}

  has(name: string): boolean {
    return this.loaded.has(name);
  }

  /** A request named this adapter as its model. */
  served(name: string): void {
    this.requests.set(name, (this.requests.get(name) ?? 0) + 1);
  }

  async load(raw: unknown): Promise<LoraAnswer> {
    const b = loadBody.safeParse(raw);
    if (!b.success) return error(400, "Both 'lora_name' and 'lora_path' must be provided.", "InvalidUserInput");
    const { lora_name: name, lora_path: dir } = b.data;
    if (this.loaded.has(name)) return error(400, `The lora adapter '${name}' has already been loaded.`, "InvalidUserInput");
    const startedAtMs = Date.now();
    // vLLM reads the PEFT folder: its config, then the weights.
    const config = path.join(dir, "adapter_config.json");
    const weights = path.join(dir, "adapter_model.safetensors");
    if (!fs.existsSync(config) || !fs.existsSync(weights)) return error(404, `No adapter found for ${dir}`, "NotFoundError");
    try {
      JSON.parse(fs.readFileSync(config, "utf8"));
    } catch {
      return error(400, `Invalid PEFT config in ${config}`, "BadRequestError");
    }
    if (this.loadMs > 0) await sleep(this.loadMs);
    this.loaded.set(name, { path: dir, created: Math.floor(Date.now() / 1000) });
    this.loads.push({ name, path: dir, startedAtMs, endedAtMs: Date.now() });
    return { status: 200, body: `Success: LoRA adapter '${name}' added successfully.`, type: "text" };
  }

  unload(raw: unknown): LoraAnswer {
    const b = unloadBody.safeParse(raw);
    if (!b.success) return error(400, "'lora_name' must be provided.", "InvalidUserInput");
    const name = b.data.lora_name;
    if (!this.loaded.delete(name)) return error(404, `The lora adapter '${name}' cannot be found.`, "NotFoundError");
    return { status: 200, body: `Success: LoRA adapter '${name}' removed successfully.`, type: "text" };
  }

  /** /v1/models entries of the loaded adapters, as vLLM lists them: root the path, parent the base. */
  models(base: string): object[] {
    return [...this.loaded].map(([id, a]) => ({ id, object: "model", created: a.created, owned_by: "vllm", root: a.path, parent: base, max_model_len: null, permission: [] }));
  }
}
