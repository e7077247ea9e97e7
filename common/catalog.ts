// A model's catalog entry as operators write it (model.yaml), checked with zod. Errors say what is
// wrong and where (`versions.0.context_length: …`), so a typo never reaches a node.
import { z } from "zod";
import { fallbacksField, providersField } from "./catalog-providers.ts";
import { durationMs } from "./duration.ts";

export const ENGINES = ["sim", "llama-server", "vllm", "sglang", "comfyui", "node-llama-cpp", "whisper-server"] as const;
export const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** The store keeps token counts and replica counts as int32: a larger one is a 400, not the store's error. */
const INT32 = 2 ** 31 - 1;
const tokens = () => z.number().int().positive().max(INT32);

const source = z.union([
  z.strictObject({ url: z.url({ protocol: /^https?$/ }), sha256: z.string().regex(/^[a-f0-9]{64}$/).optional() }),
  z.strictObject({ set: z.string().min(1), sha256: z.string().regex(/^[a-f0-9]{64}$/).optional() }),
  z.strictObject({ path: z.string().startsWith("/", "a local path must be absolute") }),
  z.strictObject({ hub: z.string().min(1) }),
  z.strictObject({}),
]);

/** Size and shape, for the GPU memory a replica needs (weights plus the KV cache of its context). */
export const memory = z.strictObject({
  weights_gb: z.number().positive().optional(),
  layers: z.number().int().positive().optional(),
  kv_heads: z.number().int().positive().optional(),
  head_dim: z.number().int().positive().optional(),
  kv_cache_dtype_bytes: z.number().positive().max(8).default(2),
  concurrent_sequences: z.number().int().positive().max(4096).default(1),
})
  // The version's check below, said in JSON Schema: the KV cache's three figures come together or not at all.
  .meta({ dependentRequired: { layers: ["kv_heads", "head_dim"], kv_heads: ["layers", "head_dim"], head_dim: ["layers", "kv_heads"] } });
export type ModelMemory = z.infer<typeof memory>;

const version = z
  .strictObject({
    version: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/),
    engine: z.enum(ENGINES, { error: () => `unknown engine; known: ${ENGINES.join(", ")}` }),
    source: source.default({}),
    args: z.array(z.string().max(1000)).max(100).default([]),
    // The two rules between fields below are said in the descriptions: JSON Schema cannot compare fields.
    context_length: tokens().default(4096).describe("at most trained_context, when that is given"),
    /** The context the model was trained for; serving more is refused. */
    trained_context: tokens().optional().describe("the context the model was trained for: context_length may not exceed it"),
    max_output: tokens().default(1024).describe("at most context_length"),
    memory: memory.optional(),
  })
  .check((ctx) => {
    const v = ctx.value;
    if (v.trained_context && v.context_length > v.trained_context) {
      ctx.issues.push({
        code: "custom",
        path: ["context_length"],
        message: `${v.context_length} is more than the ${v.trained_context} tokens the model was trained for`,
        input: v.context_length,
      });
    }
    const m = v.memory;
    if (m && [m.layers, m.kv_heads, m.head_dim].some((x) => x !== undefined) && ![m.layers, m.kv_heads, m.head_dim].every((x) => x !== undefined)) {
      ctx.issues.push({ code: "custom", path: ["memory"], message: "layers, kv_heads and head_dim go together (the KV cache needs all three)", input: m });
    }
    if (v.max_output > v.context_length) {
      ctx.issues.push({ code: "custom", path: ["max_output"], message: `longer than the context (${v.context_length})`, input: v.max_output });
    }
  });

export const profile = z.strictObject({
  name: z.string().min(1).default("default"),
  gpu: z.strictObject({ min_compute_capability: z.number().positive().default(0), min_memory_gb: z.number().nonnegative().default(0) }).optional(),
  labels: z.record(z.string(), z.string()).default({}),
  replicas: z.number().int().nonnegative().default(1),
  gpus_per_replica: z.number().int().nonnegative().default(0),
})
  // The entry's check, said in JSON Schema: a GPU profile asks for at least one GPU a replica.
  .meta({ if: { required: ["gpu"] }, then: { required: ["gpus_per_replica"], properties: { gpus_per_replica: { minimum: 1 } } } });
export type Profile = z.infer<typeof profile>;

export const modelEntry = z
  .strictObject({
    name: z.string().regex(MODEL_NAME, "letters, digits, . _ - (at most 64)"),
    owner: z.string().default("llmgw"),
    licence: z.string().optional(),
    routing_profile: z.enum(["chat", "batch", "long-context"]).default("chat"),
    allow_pickle: z.boolean().default(false),
    min_replicas: z.number().int().nonnegative().max(INT32).default(1),
    /** min_replicas 0 (on demand): idle this long, the replicas stop; absent: LLMGW_IDLE_AFTER_MS. */
    idle_after: durationMs.optional(),
    /** How long a request waits for the model to wake; absent: LLMGW_WAKE_WAIT_MS. */
    wake_wait: durationMs.optional(),
    /** Empty only for a model served by outside providers alone. */
    versions: z.array(version).default([]),
    profiles: z.array(profile).default([{ name: "default", labels: {}, replicas: 1, gpus_per_replica: 0 }]),
    providers: providersField,
    fallbacks: fallbacksField,
  })
  .check((ctx) => {
    const v = ctx.value;
    if (v.versions.length === 0 && v.providers.length === 0) ctx.issues.push({ code: "custom", path: ["versions"], message: "at least one version, or an outside provider", input: v.versions });
    if (v.fallbacks.includes(v.name)) ctx.issues.push({ code: "custom", path: ["fallbacks"], message: "a model cannot fall back to itself", input: v.fallbacks });
    const names = new Set<string>();
    v.providers.forEach((p, i) => {
      if (names.has(p.name)) ctx.issues.push({ code: "custom", path: ["providers", i, "name"], message: `provider ${p.name} appears twice`, input: p.name });
      names.add(p.name);
    });
    const seen = new Set<string>();
    ctx.value.versions.forEach((v, i) => {
      if (seen.has(v.version)) ctx.issues.push({ code: "custom", path: ["versions", i, "version"], message: `version ${v.version} appears twice`, input: v.version });
      seen.add(v.version);
    });
    ctx.value.profiles.forEach((p, i) => {
      if (p.gpu && p.gpus_per_replica === 0) {
        ctx.issues.push({ code: "custom", path: ["profiles", i, "gpus_per_replica"], message: "a GPU profile needs at least one GPU per replica", input: 0 });
      }
    });
  })
  // The one rule above JSON Schema can say: a version or a provider.
  .meta({ anyOf: [{ properties: { versions: { minItems: 1 } }, required: ["versions"] }, { properties: { providers: { minItems: 1 } }, required: ["providers"] }] });
export type ModelEntry = z.infer<typeof modelEntry>;

/** Every problem zod found, one line each, with where it is. */
export function describeIssues(err: z.ZodError): string[] {
  return err.issues.map((i) => `${i.path.map(String).join(".") || "(top)"}: ${i.message}`);
}
