// The sim's settings: one zod schema, the command-line flags that set them and the SIM_* variables
// read when a flag is absent. Kept apart from the server so the agent can check a catalog's flags
// (agent/engines/sim.ts) without loading the engine.
import { z } from "zod";
import { SIM_TASKS } from "./tasks.ts";

export const simSettingsSchema = z
  .object({
    port: z.coerce.number().int().min(0).max(65535),
    host: z.string().min(1).default("127.0.0.1"),
    model: z.string().min(1),
    ttftMs: z.coerce.number().finite().min(0).max(600_000).default(0),
    /** Models a prefix cache (prefix-cache.ts): a prompt whose beginning was served recently gets this TTFT instead of ttftMs. */
    prefixCacheTtftMs: z.coerce.number().finite().min(0).max(600_000).optional(),
    tokensPerSecond: z.coerce.number().finite().min(0).max(1_000_000).default(0),
    slots: z.coerce.number().int().min(1).max(100_000).default(64),
    loadDelayMs: z.coerce.number().finite().min(0).max(86_400_000).default(0),
    maxTokensDefault: z.coerce.number().int().min(1).max(1_000_000).default(16),
    contextLength: z.coerce.number().int().min(1).max(100_000_000).default(4096),
    /** How long loading a LoRA adapter (/v1/load_lora_adapter) takes. */
    loraLoadMs: z.coerce.number().finite().min(0).max(600_000).default(0),
    /** Every chat answer thinks first (reasoning_content), as a reasoning model behind vLLM's reasoning parser does. */
    reasoning: z.union([z.boolean(), z.stringbool()]).default(false),
    /** Answers chats as a Llama Guard style safety classifier: `safe`, or `unsafe` and a category (./judge.ts). */
    guardJudge: z.union([z.boolean(), z.stringbool()]).default(false),
    /** How texts are embedded: `hash` (any change gives an unrelated vector) or `words` (a bag of words, so rewordings land close). */
    embeddings: z.enum(["hash", "words"]).default("hash"),
    /** The one task the model serves (./tasks.ts), as vLLM serves a Whisper or an embedding model; `all` by default. */
    task: z.enum(SIM_TASKS).default("all"),
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name")
      .optional(),
    /** For in-process use (tests); the command line only takes --api-key-env. */
    apiKey: z.string().min(1).optional(),
  })
  .strict();

export type SimSettingsInput = z.input<typeof simSettingsSchema>;
export type SimSettings = z.output<typeof simSettingsSchema>;

/** Command-line flags, the settings key each sets, and the env var read when it is absent. */
export const SIM_FLAGS: Readonly<Record<string, { key: keyof SimSettings; env: string }>> = {
  "--port": { key: "port", env: "SIM_PORT" },
  "--host": { key: "host", env: "SIM_HOST" },
  "--model": { key: "model", env: "SIM_MODEL" },
  "--ttft-ms": { key: "ttftMs", env: "SIM_TTFT_MS" },
  "--prefix-cache-ttft-ms": { key: "prefixCacheTtftMs", env: "SIM_PREFIX_CACHE_TTFT_MS" },
  "--tokens-per-second": { key: "tokensPerSecond", env: "SIM_TOKENS_PER_SECOND" },
  "--slots": { key: "slots", env: "SIM_SLOTS" },
  "--load-delay-ms": { key: "loadDelayMs", env: "SIM_LOAD_DELAY_MS" },
  "--max-tokens-default": { key: "maxTokensDefault", env: "SIM_MAX_TOKENS_DEFAULT" },
  "--context-length": { key: "contextLength", env: "SIM_CONTEXT_LENGTH" },
  "--api-key-env": { key: "apiKeyEnv", env: "SIM_API_KEY_ENV" },
  "--reasoning": { key: "reasoning", env: "SIM_REASONING" },
  "--guard-judge": { key: "guardJudge", env: "SIM_GUARD_JUDGE" },
  "--lora-load-ms": { key: "loraLoadMs", env: "SIM_LORA_LOAD_MS" },
  "--embeddings": { key: "embeddings", env: "SIM_EMBEDDINGS" },
  "--task": { key: "task", env: "SIM_TASK" },
};

/** Splits `--flag value` / `--flag=value` pairs; throws on anything else. */
export function parseSimFlags(argv: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith("--")) throw new Error(`unexpected argument ${JSON.stringify(arg)}`);
    const eq = arg.indexOf("=");
    const flag = eq >= 0 ? arg.slice(0, eq) : arg;
    const spec = SIM_FLAGS[flag];
    if (!spec) throw new Error(`unknown flag ${flag} (known: ${Object.keys(SIM_FLAGS).join(", ")})`);
    let value: string;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith("--")) throw new Error(`${flag} needs a value`);
      value = next;
      i++;
    }
    if (spec.key in out) throw new Error(`${flag} given twice`);
    out[spec.key] = value;
  }
  return out;
}

/** Settings from flags, with SIM_* env vars as fallback. Throws a readable message when bad. */
// The SIM_* variables are the sim's own (it runs as an engine child, without llmgw's config).
export function simSettingsFromArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): SimSettings {
  const raw: Record<string, string> = {};
  for (const spec of Object.values(SIM_FLAGS)) {
    const v = env[spec.env];
    if (v !== undefined && v !== "") raw[spec.key] = v;
  }
  Object.assign(raw, parseSimFlags(argv));
  return checkSettings(raw);
}

/** Checked settings; a bad one throws a message naming its flag. */
export function checkSettings(raw: unknown): SimSettings {
  const r = simSettingsSchema.safeParse(raw);
  if (!r.success) {
    const keyToFlag = new Map(Object.entries(SIM_FLAGS).map(([f, s]) => [s.key as string, f]));
    throw new Error(
      r.error.issues
        .map((i) => {
          const k = String(i.path[0] ?? "");
          return `${keyToFlag.get(k) ?? k}: ${i.message}`;
        })
        .join("; "),
    );
  }
  return r.data;
}
