// The `sim` engine: a simulated inference engine the agent starts per replica. It speaks the
// OpenAI HTTP API (chat, completions, embeddings, models) and vLLM's Prometheus metrics, so the
// gateway and router cannot tell it from a real engine. Answers are deterministic for a prompt
// and seed; timing (time to first token, tokens per second, slots and a FIFO queue, a loading
// delay) is simulated. It is built for speed: raw node:http, precomputed strings, and no timers
// at all when both the time to first token and the token rate are 0.
//
// Run as a script:
//   node --import tsx agent/engines/sim-server.ts --port 18001 --model sim-chat [--ttft-ms 0]
//     [--tokens-per-second 0] [--slots 64] [--load-delay-ms 0] [--max-tokens-default 16]
//     [--context-length 4096] [--api-key-env NAME] [--host 127.0.0.1] [--prefix-cache-ttft-ms N]
//     [--lora-load-ms 0]   (LoRA adapters at run time: sim-lora.ts)
// Every flag also reads SIM_<NAME> from the environment (SIM_TTFT_MS, ...) when absent.
import http from "node:http";
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { log, setLogProcess } from "../../common/logging.ts";
import { sampleJsonObject, sampleObject, sampleValue } from "./sim-json.ts";
import { chatLogprobs, chatTokenLogprob, completionLogprobs } from "./sim-logprobs.ts";
import { PrefixCache, promptPrefix, type PromptPrefix } from "./sim-prefix-cache.ts";
import { SimLoras } from "./sim-lora.ts";

// ---------------------------------------------------------------------------------------------
// Settings

export const simSettingsSchema = z
  .object({
    port: z.coerce.number().int().min(0).max(65535),
    host: z.string().min(1).default("127.0.0.1"),
    model: z.string().min(1),
    ttftMs: z.coerce.number().finite().min(0).max(600_000).default(0),
    /** Models a prefix cache (sim-prefix-cache.ts): a prompt whose beginning was served recently gets this TTFT instead of ttftMs. */
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
  "--lora-load-ms": { key: "loraLoadMs", env: "SIM_LORA_LOAD_MS" },
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
export function simSettingsFromArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): SimSettings {
  const raw: Record<string, string> = {};
  for (const spec of Object.values(SIM_FLAGS)) {
    const v = env[spec.env];
    if (v !== undefined && v !== "") raw[spec.key] = v;
  }
  Object.assign(raw, parseSimFlags(argv));
  return checkSettings(raw);
}

function checkSettings(raw: unknown): SimSettings {
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

// ---------------------------------------------------------------------------------------------
// Deterministic text

const VOCAB = (
  "the of and to in is that it was for on are as with his they at be this from have or by one had " +
  "not but what all were when we there can an your which their said if do will each about how up out " +
  "them then she many some so these would other into has more her two like him see time could no make " +
  "than first been its who now people my made over did down only way find use may water long little " +
  "very after words called just where most know get through back much go good new write our me man too " +
  "any day same right look think also around another came come work three word must because does part " +
  "even place well such here take why things help put years different away again off went old number " +
  "great tell men say small every found still between name should home big give air line set own under " +
  "read last never us left end along while might next sound below saw something thought both few those " +
  "always looked show large often together asked house world going want school important until form food " +
  "keep children feet land side without boy once animals life enough took sometimes four head above kind " +
  "began almost live page got earth need far hand high year mother light parts country father let night " +
  "following picture being study second eyes soon times story boys since white days ever paper hard near " +
  "sentence better best across during today others however sure means knew try told young miles sun ways " +
  "thing whole hear example heard several change answer room sea against top turned learn point city play " +
  "toward five using himself usually money seen car morning given family yes today simulated answer"
)
  .split(" ")
  .map((w) => " " + w);
const VOCAB_N = VOCAB.length;
// Sentence ends make the text look less like a word list; they are tokens of their own.
const PERIOD = ".";

/** FNV-1a over UTF-16 code units, continuing from `h`. */
function fnv(s: string, h: number): number {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
const FNV0 = 0x811c9dc5;

/** mulberry32: small, fast, good enough. Returns a function giving uint32s. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

function mixSeed(promptHash: number, seed: number, choice: number): number {
  let h = promptHash ^ Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul((seed / 4294967296) | 0, 0x85ebca77);
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h ^= Math.imul(choice + 1, 0x27d4eb2f);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

interface Choice {
  pieces: string[]; // token texts as emitted (the last may be cut short by a stop string); a tool call's argument pieces
  text: string;
  finish: "stop" | "length" | "tool_calls";
  stopReason: string | null; // the stop string matched, as vLLM reports it
  reasoning: string[]; // reasoning tokens, emitted before `pieces` (usually the shared empty array)
  tool: ToolCall | null; // set when the answer is a tool call: `pieces` are then its arguments
}

interface ToolCall {
  id: string;
  name: string;
}

const NO_REASONING: string[] = [];

/**
 * One choice's answer. The natural length of an answer is 8..255 tokens, fixed by the PRNG; the
 * answer stops there ("stop"), or at `limit` ("length"), or just before the first stop string.
 */
function generate(promptHash: number, seed: number, choice: number, limit: number, stops: string[] | null): Choice {
  const rnd = prng(mixSeed(promptHash, seed, choice));
  const natural = 8 + (rnd() & 0xf7);
  const count = natural < limit ? natural : limit;
  const pieces: string[] = new Array(count);
  let text = "";
  for (let i = 0; i < count; i++) {
    const r = rnd();
    const p = i > 2 && (r & 15) === 0 ? PERIOD : (VOCAB[r % VOCAB_N] as string);
    pieces[i] = p;
    text += p;
  }
  let finish: "stop" | "length" = natural < limit ? "stop" : "length";
  let stopReason: string | null = null;
  if (stops !== null) {
    let cut = -1;
    for (const s of stops) {
      const at = text.indexOf(s);
      if (at >= 0 && (cut < 0 || at < cut)) {
        cut = at;
        stopReason = s;
      }
    }
    if (cut >= 0) {
      finish = "stop";
      text = text.slice(0, cut);
      let len = 0;
      let k = 0;
      while (k < pieces.length && len + (pieces[k] as string).length <= cut) len += (pieces[k++] as string).length;
      if (len < cut) {
        pieces[k] = (pieces[k] as string).slice(0, cut - len);
        k++;
      }
      pieces.length = k;
    }
  }
  return { pieces, text, finish, stopReason, reasoning: NO_REASONING, tool: null };
}

/** Reasoning text for a prompt: 6..13 tokens, deterministic, and different from the answer. */
function reasoningPieces(promptHash: number, seed: number, choice: number): string[] {
  const rnd = prng(mixSeed(promptHash ^ 0x7ea5, seed, choice));
  const count = 6 + (rnd() & 7);
  const out: string[] = new Array(count);
  for (let i = 0; i < count; i++) out[i] = VOCAB[rnd() % VOCAB_N] as string;
  return out;
}

/** JSON (a tool call's arguments, a structured answer) cut in pieces of 8 characters, one per token. */
function jsonPieces(json: string): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < json.length; i += 8) pieces.push(json.slice(i, i + 8));
  return pieces;
}

function toolChoice(tool: ToolCall, args: string): Choice {
  return { pieces: jsonPieces(args), text: args, finish: "tool_calls", stopReason: null, reasoning: NO_REASONING, tool };
}

/** Where token `k` starts in the answer's text. */
function offsetOf(pieces: readonly string[], k: number): number {
  let n = 0;
  for (let i = 0; i < k; i++) n += (pieces[i] as string).length;
  return n;
}

/**
 * The JSON a chat request's response_format asks for, fixed by the prompt: a small object for
 * json_object, a value valid against the schema for json_schema; null for text (or none).
 */
function responseFormat(rf: unknown, promptHash: number): string | null {
  if (rf === undefined || rf === null) return null;
  const f = rf as { type?: unknown; json_schema?: { schema?: unknown } | null };
  if (typeof rf !== "object" || typeof f.type !== "string") throw new BadRequest("response_format must be an object with a type", "response_format");
  if (f.type === "text") return null;
  // A json_schema without a schema (OpenAI's is optional) asks for any JSON: a small object.
  if (f.type === "json_object" || (f.type === "json_schema" && f.json_schema?.schema === undefined)) {
    const rnd = prng(promptHash);
    return sampleJsonObject([VOCAB[rnd() % VOCAB_N] as string, VOCAB[rnd() % VOCAB_N] as string], promptHash);
  }
  if (f.type === "json_schema") {
    const schema = f.json_schema?.schema;
    if (schema === null || typeof schema !== "object" || Array.isArray(schema))
      throw new BadRequest("response_format.json_schema.schema must be a JSON schema object", "response_format.json_schema.schema");
    return JSON.stringify(sampleValue(schema, "value"));
  }
  throw new BadRequest("response_format.type must be text, json_object or json_schema", "response_format.type");
}

/** A structured answer (response_format); cut at `limit` tokens like any answer, then no longer valid JSON. */
function structuredChoice(json: string, limit: number): Choice {
  const pieces = jsonPieces(json);
  if (pieces.length <= limit) return { pieces, text: json, finish: "stop", stopReason: null, reasoning: NO_REASONING, tool: null };
  pieces.length = limit;
  return { pieces, text: pieces.join(""), finish: "length", stopReason: null, reasoning: NO_REASONING, tool: null };
}

// ---------------------------------------------------------------------------------------------
// Metrics (vLLM's names), kept as plain numbers and written by hand

const TTFT_BUCKETS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0,
  640.0, 2560.0,
];
const TPOT_BUCKETS = [
  0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
];
const E2E_BUCKETS = [
  0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0,
  7680.0,
];

class Histogram {
  readonly counts: Float64Array; // per bucket, not cumulative; the last is +Inf
  sum = 0;
  count = 0;
  constructor(readonly bounds: number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }
  /** Records `weight` observations of `v` seconds. */
  observe(v: number, weight = 1): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && v > (b[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + weight;
    this.sum += v * weight;
    this.count += weight;
  }
  render(out: string[], name: string, help: string, label: string): void {
    out.push(`# HELP ${name} ${help}\n# TYPE ${name} histogram\n`);
    let cum = 0;
    for (let i = 0; i < this.bounds.length; i++) {
      cum += this.counts[i] as number;
      out.push(`${name}_bucket{${label},le="${fmt(this.bounds[i] as number)}"} ${fmt(cum)}\n`);
    }
    cum += this.counts[this.bounds.length] as number;
    out.push(`${name}_bucket{${label},le="+Inf"} ${fmt(cum)}\n`);
    out.push(`${name}_count{${label}} ${fmt(this.count)}\n${name}_sum{${label}} ${fmt(this.sum)}\n`);
  }
}

/** Prometheus' Python client writes floats: 1.0, 0.25, 1e-05. */
function fmt(v: number): string {
  return Number.isInteger(v) ? v.toFixed(1) : String(v);
}

function promLabelValue(s: string): string {
  return s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers

const JSON_TYPE = "application/json";
const SSE_TYPE = "text/event-stream; charset=utf-8";

function errorBody(message: string, type: string, param: string | null, code: string | null): string {
  return JSON.stringify({ error: { message, type, param, code } });
}

class BadRequest extends Error {
  constructor(
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

type Stops = string[] | null;

interface GenRequest {
  kind: "chat" | "completion";
  model: string; // JSON-encoded, ready to splice
  promptHash: number;
  promptTokens: number[]; // one per prompt (completions may batch several)
  n: number;
  limit: number; // max completion tokens per choice
  seed: number;
  stops: Stops;
  stream: boolean;
  includeUsage: boolean;
  echo: string[] | null; // completions with echo: the prompt texts
  tool: { name: string; args: string } | null; // chat: answer with a call of this tool
  reasoning: boolean; // chat: think first
  structured: string | null; // chat: the JSON a response_format asks for
  logprobs: number; // top alternatives per token when logprobs were asked for; -1: not asked
  requestId: string | undefined;
  arrival: number; // performance.now() ms
  prefix: PromptPrefix | null; // null unless the prefix cache is modelled
}

function asInt(v: unknown, name: string, min: number, max: number): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v < min || v > max)
    throw new BadRequest(`${name} must be an integer between ${min} and ${max}`, name);
  return v;
}

function parseStops(v: unknown): Stops {
  if (v === undefined || v === null) return null;
  if (typeof v === "string") return v.length > 0 ? [v] : null;
  if (Array.isArray(v)) {
    const out: string[] = [];
    for (const s of v) {
      if (typeof s !== "string") throw new BadRequest("stop must be a string or an array of strings", "stop");
      if (s.length > 0) out.push(s);
    }
    return out.length > 0 ? out : null;
  }
  throw new BadRequest("stop must be a string or an array of strings", "stop");
}

function contentText(c: unknown, i: number): string {
  if (c === undefined || c === null) return "";
  if (typeof c === "string") return c;
  if (Array.isArray(c)) {
    let s = "";
    for (const part of c) {
      if (part === null || typeof part !== "object")
        throw new BadRequest(`messages[${i}].content parts must be objects`, `messages[${i}].content`);
      const p = part as { type?: unknown; text?: unknown };
      if (typeof p.text === "string") s += p.text;
      else if (typeof p.type !== "string")
        throw new BadRequest(`messages[${i}].content parts need a type`, `messages[${i}].content`);
    }
    return s;
  }
  throw new BadRequest(`messages[${i}].content must be a string or an array of parts`, `messages[${i}].content`);
}

// ---------------------------------------------------------------------------------------------
// The server

export interface SimHandle {
  port: number;
  close(): Promise<void>;
}

interface Job {
  req: GenRequest;
  res: http.ServerResponse;
  choices: Choice[]; // computed when the job starts
  maxPieces: number;
  emitted: number; // tokens emitted per choice so far (timed streaming)
  timer: NodeJS.Timeout | null;
  firstAt: number; // performance.now() of the first token
  done: boolean;
  queued: boolean;
  id: string;
}

export async function startSim(input: SimSettingsInput): Promise<SimHandle> {
  const s = checkSettings(input);
  const apiKey = s.apiKey ?? (s.apiKeyEnv ? process.env[s.apiKeyEnv] || undefined : undefined);
  // A key asked for but not given must not start an engine open to anyone.
  if (s.apiKeyEnv && !apiKey) throw new Error(`--api-key-env names ${s.apiKeyEnv}, which is not set: refusing to serve without a key`);
  const expectedAuth = apiKey ? `Bearer ${apiKey}` : null;
  const instant = s.ttftMs === 0 && s.tokensPerSecond === 0;
  const tokenMs = s.tokensPerSecond > 0 ? 1000 / s.tokensPerSecond : 0;
  // Only on the timed path: an instant sim has no first-token time to shorten.
  const prefixCache = s.prefixCacheTtftMs !== undefined && !instant ? new PrefixCache() : null;
  const TICK_MIN_MS = 4; // fast token rates are emitted in batches, at most one timer per 4 ms
  const created = Math.floor(Date.now() / 1000);
  const servedJson = JSON.stringify(s.model);
  const label = `model_name="${promLabelValue(s.model)}"`;

  let ready = s.loadDelayMs === 0;
  let readyTimer: NodeJS.Timeout | null = null;
  if (!ready) {
    readyTimer = setTimeout(() => {
      ready = true;
      readyTimer = null;
    }, s.loadDelayMs);
    readyTimer.unref();
  }
  let stopping = false;
  let idSeq = 0;

  // Metrics state.
  let running = 0;
  const queue: Job[] = [];
  let queueHead = 0; // queue[queueHead..] are waiting; compacted now and then
  let waiting = 0;
  let promptTokensTotal = 0;
  let generationTokensTotal = 0;
  const success = { stop: 0, length: 0, abort: 0 };
  const ttftH = new Histogram(TTFT_BUCKETS);
  const tpotH = new Histogram(TPOT_BUCKETS);
  const e2eH = new Histogram(E2E_BUCKETS);
  let onIdle: (() => void) | null = null;

  // Precomputed bodies and headers.
  const baseModel = { id: s.model, object: "model", created, owned_by: "vllm", root: s.model, parent: null, max_model_len: s.contextLength, permission: [] };
  const modelsBody = JSON.stringify({ object: "list", data: [baseModel] });
  const loras = new SimLoras(s.loraLoadMs);
  const notFoundBody = errorBody("Not Found", "invalid_request_error", null, null);
  const unauthorizedBody = errorBody(
    "Incorrect API key provided. You can find your API key in your settings.",
    "invalid_request_error",
    null,
    "invalid_api_key",
  );
  const loadingBody = errorBody("The model is loading; try again shortly.", "service_unavailable_error", null, "model_loading");
  const stoppingBody = errorBody("The engine is shutting down.", "service_unavailable_error", null, "shutting_down");

  function send(res: http.ServerResponse, status: number, body: string, reqId: string | undefined, type = JSON_TYPE): void {
    const headers: Record<string, string | number> = {
      "content-type": type,
      "content-length": Buffer.byteLength(body),
    };
    if (reqId !== undefined) headers["x-request-id"] = reqId;
    if (status === 503) headers["retry-after"] = 1;
    if (stopping) headers["connection"] = "close";
    res.writeHead(status, headers);
    res.end(body);
  }

  function sendError(res: http.ServerResponse, status: number, message: string, param: string | null, reqId: string | undefined): void {
    const type = status >= 500 ? "server_error" : "invalid_request_error";
    send(res, status, errorBody(message, type, param, null), reqId);
  }

  // --- Request parsing -----------------------------------------------------------------------

  function parseCommon(body: Record<string, unknown>, kind: "chat" | "completion", reqId: string | undefined, arrival: number): GenRequest {
    let promptHash = FNV0;
    let promptTokens: number[];
    let echo: string[] | null = null;
    let tool: GenRequest["tool"] = null;
    let reasoning = false;
    let structured: string | null = null;
    let logprobs = -1;
    if (kind === "chat") {
      const messages = body.messages;
      if (!Array.isArray(messages) || messages.length === 0)
        throw new BadRequest("messages must be a non-empty array", "messages");
      let chars = 0;
      for (let i = 0; i < messages.length; i++) {
        const m = messages[i] as { role?: unknown; content?: unknown } | null;
        if (m === null || typeof m !== "object" || Array.isArray(m))
          throw new BadRequest(`messages[${i}] must be an object`, `messages[${i}]`);
        if (typeof m.role !== "string") throw new BadRequest(`messages[${i}].role must be a string`, `messages[${i}].role`);
        const text = contentText(m.content, i);
        chars += text.length;
        promptHash = fnv(text, fnv(m.role, promptHash) ^ 0x1f);
      }
      promptTokens = [Math.max(1, Math.ceil(chars / 4))];
      tool = toolToCall(body, (messages[messages.length - 1] as { role: string }).role);
      const ctk = body.chat_template_kwargs as { enable_thinking?: unknown } | null | undefined;
      const asked = ctk !== null && typeof ctk === "object" ? ctk.enable_thinking : undefined;
      reasoning = typeof asked === "boolean" ? asked : s.reasoning;
      structured = responseFormat(body.response_format, promptHash);
      if (body.logprobs !== undefined && body.logprobs !== null && typeof body.logprobs !== "boolean")
        throw new BadRequest("logprobs must be a boolean", "logprobs");
      const top = asInt(body.top_logprobs, "top_logprobs", 0, 20);
      if (top !== undefined && body.logprobs !== true) throw new BadRequest("top_logprobs needs logprobs set to true", "top_logprobs");
      if (body.logprobs === true) logprobs = top ?? 0;
    } else {
      const p = body.prompt;
      const prompts: (string | number[])[] = [];
      if (typeof p === "string") prompts.push(p);
      else if (Array.isArray(p) && p.length > 0) {
        if (typeof p[0] === "number") prompts.push(p as number[]);
        else prompts.push(...(p as (string | number[])[]));
      } else throw new BadRequest("prompt must be a string, an array of strings, or token arrays", "prompt");
      promptTokens = [];
      for (const q of prompts) {
        if (typeof q === "string") {
          promptTokens.push(Math.max(1, Math.ceil(q.length / 4)));
          promptHash = fnv(q, promptHash ^ 0x2f);
        } else if (Array.isArray(q) && q.length > 0 && q.every((t) => Number.isInteger(t))) {
          promptTokens.push(q.length);
          promptHash = fnv(q.join(","), promptHash ^ 0x3f);
        } else throw new BadRequest("prompt must be a string, an array of strings, or token arrays", "prompt");
      }
      if (body.echo === true) echo = prompts.map((q) => (typeof q === "string" ? q : ""));
      logprobs = asInt(body.logprobs, "logprobs", 0, 5) ?? -1;
    }
    if (body.model !== undefined && body.model !== null && typeof body.model !== "string")
      throw new BadRequest("model must be a string", "model");
    const model = typeof body.model === "string" && body.model !== "" ? JSON.stringify(body.model) : servedJson;
    const n = asInt(body.n, "n", 1, 128) ?? 1;
    let maxPrompt = 0;
    for (const t of promptTokens) if (t > maxPrompt) maxPrompt = t;
    const room = s.contextLength - maxPrompt;
    const asked =
      asInt(body.max_completion_tokens, "max_completion_tokens", 1, 100_000_000) ??
      asInt(body.max_tokens, "max_tokens", 1, 100_000_000);
    if (room <= 0 || (asked !== undefined && asked > room))
      throw new BadRequest(
        `This model's maximum context length is ${s.contextLength} tokens. However, you requested ` +
          `${maxPrompt + (asked ?? 0)} tokens (${maxPrompt} in the messages, ${asked ?? 0} in the completion). ` +
          `Please reduce the length of the messages or completion.`,
        asked !== undefined ? "max_tokens" : "messages",
      );
    // A structured answer ends where its JSON does, as guided decoding's does: no short default cuts it.
    const limit = asked ?? (structured !== null ? room : Math.min(s.maxTokensDefault, room));
    const seedV = body.seed;
    if (seedV !== undefined && seedV !== null && (typeof seedV !== "number" || !Number.isInteger(seedV)))
      throw new BadRequest("seed must be an integer", "seed");
    const stream = body.stream === true;
    if (body.stream !== undefined && body.stream !== null && typeof body.stream !== "boolean")
      throw new BadRequest("stream must be a boolean", "stream");
    const so = body.stream_options as { include_usage?: unknown } | null | undefined;
    const includeUsage = stream && so !== null && typeof so === "object" && so.include_usage === true;
    return {
      kind,
      model,
      promptHash,
      promptTokens,
      n,
      limit,
      seed: typeof seedV === "number" ? seedV : 0,
      stops: parseStops(body.stop),
      stream,
      includeUsage,
      echo,
      tool,
      reasoning,
      structured,
      logprobs,
      requestId: reqId,
      arrival,
      prefix: prefixCache === null ? null : promptPrefix(body, promptTokens.reduce((a, b) => a + b, 0)),
    };
  }

  /**
   * A chat request with tools, whose last message is the user's, is answered with a call of the
   * named tool (tool_choice) or else the first; tool_choice "none" or a tool result gets text.
   */
  function toolToCall(body: Record<string, unknown>, lastRole: string): GenRequest["tool"] {
    const tools = body.tools;
    if (!Array.isArray(tools) || tools.length === 0 || lastRole !== "user" || body.tool_choice === "none") return null;
    const named = (body.tool_choice as { function?: { name?: unknown } } | null | undefined)?.function?.name;
    const fns = tools.map((t) => (t as { function?: { name?: unknown; parameters?: unknown } } | null)?.function);
    const fn = typeof named === "string" ? fns.find((f) => f?.name === named) : fns[0];
    if (!fn || typeof fn.name !== "string")
      throw new BadRequest(typeof named === "string" ? `tool_choice names an unknown tool '${named}'` : "tools[0].function.name must be a string", "tools");
    return { name: fn.name, args: JSON.stringify(sampleObject(fn.parameters)) };
  }

  // --- Generation and writing ----------------------------------------------------------------

  function computeChoices(g: GenRequest): Choice[] {
    const out: Choice[] = [];
    for (let p = 0; p < g.promptTokens.length; p++) {
      const h = p === 0 ? g.promptHash : mixSeed(g.promptHash, p, 0x5eed);
      for (let i = 0; i < g.n; i++) {
        const c =
          g.tool !== null
            ? toolChoice({ id: `call_${(h ^ i).toString(16)}`, name: g.tool.name }, g.tool.args)
            : g.structured !== null
              ? structuredChoice(g.structured, g.limit)
              : generate(h, g.seed, i, g.limit, g.stops);
        if (g.reasoning) c.reasoning = reasoningPieces(h, g.seed, i);
        out.push(c);
      }
    }
    return out;
  }

  function usageJson(g: GenRequest, choices: Choice[]): string {
    // The prompt is read once per prompt, not once per choice.
    let pt = 0;
    for (const t of g.promptTokens) pt += t;
    let ct = 0;
    for (const c of choices) ct += c.pieces.length + c.reasoning.length;
    return `{"prompt_tokens":${pt},"total_tokens":${pt + ct},"completion_tokens":${ct},"prompt_tokens_details":null}`;
  }

  function fullBody(g: GenRequest, id: string, choices: Choice[]): string {
    let cs = "";
    for (let i = 0; i < choices.length; i++) {
      const c = choices[i] as Choice;
      const sr = c.stopReason === null ? "null" : JSON.stringify(c.stopReason);
      if (i > 0) cs += ",";
      if (g.kind === "chat") {
        const content = c.tool === null ? JSON.stringify(c.text) : "null";
        const reasoning = c.reasoning.length > 0 ? JSON.stringify(c.reasoning.join("")) : "null";
        const calls =
          c.tool === null ? "" : JSON.stringify({ id: c.tool.id, type: "function", function: { name: c.tool.name, arguments: c.text } });
        cs +=
          `{"index":${i},"message":{"role":"assistant","content":${content},"reasoning_content":${reasoning},"refusal":null,"tool_calls":[${calls}]},` +
          `"logprobs":${g.logprobs < 0 || c.tool !== null ? "null" : chatLogprobs(c.pieces, 0, g.logprobs, VOCAB)},"finish_reason":"${c.finish}","stop_reason":${sr}}`;
      } else {
        const echoed = g.echo !== null ? (g.echo[Math.floor(i / g.n)] ?? "") : "";
        const lp = g.logprobs < 0 ? "null" : completionLogprobs(c.pieces, 0, echoed.length, g.logprobs, VOCAB);
        cs += `{"index":${i},"text":${JSON.stringify(echoed + c.text)},"logprobs":${lp},"finish_reason":"${c.finish}","stop_reason":${sr}}`;
      }
    }
    const object = g.kind === "chat" ? "chat.completion" : "text_completion";
    return (
      `{"id":"${id}","object":"${object}","created":${created},"model":${g.model},"choices":[${cs}],` +
      `"usage":${usageJson(g, choices)},"system_fingerprint":null}`
    );
  }

  /** SSE events for tokens [from, to) of every choice, interleaved by step. */
  function chunks(job: Job, from: number, to: number): string {
    const g = job.req;
    const head =
      g.kind === "chat"
        ? `data: {"id":"${job.id}","object":"chat.completion.chunk","created":${created},"model":${g.model},"choices":[`
        : `data: {"id":"${job.id}","object":"text_completion","created":${created},"model":${g.model},"choices":[`;
    const tail = g.includeUsage ? `],"usage":null}\n\n` : `]}\n\n`;
    let out = "";
    for (let step = from; step < to; step++) {
      for (let i = 0; i < job.choices.length; i++) {
        const c = job.choices[i] as Choice;
        // A choice cut to nothing by a stop string still gets one (empty) chunk with its finish.
        const r = c.reasoning.length;
        const len = r + (c.pieces.length > 0 ? c.pieces.length : 1);
        if (step >= len) continue;
        const last = step === len - 1;
        const k = step - r; // the answer's token index; negative while reasoning
        let piece = c.pieces.length === 0 || k < 0 ? "" : (c.pieces[k] as string);
        if (step === 0 && g.echo !== null) piece = (g.echo[Math.floor(i / g.n)] ?? "") + piece;
        const fin = last ? `"${c.finish}"` : "null";
        const sr = last && c.stopReason !== null ? JSON.stringify(c.stopReason) : "null";
        if (g.kind === "chat") {
          if (step === 0)
            out += `${head}{"index":${i},"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}${tail}`;
          const delta =
            k < 0
              ? `{"reasoning_content":${JSON.stringify(c.reasoning[step] as string)}}`
              : c.tool === null
                ? `{"content":${JSON.stringify(piece)}}`
                : k === 0
                  ? `{"tool_calls":[{"index":0,"id":"${c.tool.id}","type":"function","function":{"name":${JSON.stringify(c.tool.name)},"arguments":${JSON.stringify(piece)}}}]}`
                  : `{"tool_calls":[{"index":0,"function":{"arguments":${JSON.stringify(piece)}}}]}`;
          const lp = g.logprobs < 0 || k < 0 || c.tool !== null || c.pieces.length === 0 ? "null" : `{"content":[${chatTokenLogprob(piece, k, g.logprobs, VOCAB)}]}`;
          out += `${head}{"index":${i},"delta":${delta},"logprobs":${lp},"finish_reason":${fin},"stop_reason":${sr}}${tail}`;
        } else {
          const lp = g.logprobs < 0 || c.pieces.length === 0 ? "null" : completionLogprobs([c.pieces[k] as string], k, (g.echo?.[Math.floor(i / g.n)]?.length ?? 0) + offsetOf(c.pieces, k), g.logprobs, VOCAB);
          out += `${head}{"index":${i},"text":${JSON.stringify(piece)},"logprobs":${lp},"finish_reason":${fin},"stop_reason":${sr}}${tail}`;
        }
      }
    }
    return out;
  }

  function streamEnd(job: Job): string {
    const g = job.req;
    let out = "";
    if (g.includeUsage) {
      const object = g.kind === "chat" ? "chat.completion.chunk" : "text_completion";
      out += `data: {"id":"${job.id}","object":"${object}","created":${created},"model":${g.model},"choices":[],"usage":${usageJson(g, job.choices)}}\n\n`;
    }
    return out + "data: [DONE]\n\n";
  }

  function startStream(job: Job): void {
    const res = job.res;
    if (res.headersSent) return;
    const headers: Record<string, string> = { "content-type": SSE_TYPE, "cache-control": "no-cache" };
    if (job.req.requestId !== undefined) headers["x-request-id"] = job.req.requestId;
    if (stopping) headers["connection"] = "close";
    res.writeHead(200, headers);
    res.flushHeaders();
  }

  function record(job: Job, end: number, aborted: boolean): void {
    const g = job.req;
    let pt = 0;
    for (const t of g.promptTokens) pt += t;
    let generated = 0;
    if (aborted) {
      for (const c of job.choices) generated += Math.min(job.emitted, c.pieces.length + c.reasoning.length);
    } else for (const c of job.choices) generated += c.pieces.length + c.reasoning.length;
    promptTokensTotal += pt;
    generationTokensTotal += generated;
    if (aborted) {
      success.abort++;
    } else {
      for (const c of job.choices) success[c.finish === "tool_calls" ? "stop" : c.finish]++;
    }
    if (job.firstAt > 0) {
      ttftH.observe((job.firstAt - g.arrival) / 1000);
      const perChoice = job.maxPieces;
      if (perChoice > 1) tpotH.observe((end - job.firstAt) / 1000 / (perChoice - 1), perChoice - 1);
    }
    if (!aborted) e2eH.observe((end - g.arrival) / 1000);
  }

  /** The instant path: no timers; the whole answer is written now. */
  function runInstant(job: Job): void {
    const g = job.req;
    job.choices = computeChoices(g);
    job.maxPieces = maxPiecesOf(job.choices);
    const now = performance.now();
    job.firstAt = now;
    if (g.stream) {
      startStream(job);
      job.res.end(chunks(job, 0, Math.max(1, job.maxPieces)) + streamEnd(job));
    } else {
      send(job.res, 200, fullBody(g, job.id, job.choices), g.requestId);
    }
    job.emitted = job.maxPieces;
    job.done = true;
    record(job, now, false);
  }

  function maxPiecesOf(choices: Choice[]): number {
    let m = 0;
    for (const c of choices) if (c.pieces.length + c.reasoning.length > m) m = c.pieces.length + c.reasoning.length;
    return m;
  }

  function finish(job: Job, aborted: boolean): void {
    if (job.done) return;
    job.done = true;
    if (job.timer !== null) {
      clearTimeout(job.timer);
      job.timer = null;
    }
    record(job, performance.now(), aborted);
    running--;
    pump();
  }

  /** The timed path: first token after ttft, then one every 1/tps seconds. */
  function runTimed(job: Job): void {
    const g = job.req;
    job.choices = computeChoices(g);
    job.maxPieces = maxPiecesOf(job.choices);
    const total = Math.max(1, job.maxPieces);
    const startedAt = performance.now();
    const ttftMs = prefixCache !== null && g.prefix !== null && prefixCache.lookup(g.prefix, startedAt) ? s.prefixCacheTtftMs! : s.ttftMs;
    if (!g.stream) {
      const delay = ttftMs + (total - 1) * tokenMs;
      job.timer = setTimeout(() => {
        job.timer = null;
        job.firstAt = startedAt + ttftMs;
        if (job.done) return;
        send(job.res, 200, fullBody(g, job.id, job.choices), g.requestId);
        job.emitted = total;
        finish(job, false);
      }, delay);
      return;
    }
    startStream(job);
    const tick = (): void => {
      job.timer = null;
      if (job.done) return;
      const now = performance.now();
      if (job.firstAt === 0) job.firstAt = now;
      const due = tokenMs === 0 ? total : Math.min(total, 1 + Math.floor((now - job.firstAt) / tokenMs + 1e-9));
      if (due > job.emitted) {
        let out = chunks(job, job.emitted, due);
        job.emitted = due;
        if (due >= total) {
          out += streamEnd(job);
          job.res.end(out);
          finish(job, false);
          return;
        }
        job.res.write(out);
      }
      const nextAt = job.firstAt + job.emitted * tokenMs;
      job.timer = setTimeout(tick, Math.max(TICK_MIN_MS, nextAt - performance.now()));
    };
    if (ttftMs === 0) tick();
    else job.timer = setTimeout(tick, ttftMs);
  }

  function pump(): void {
    while (running < s.slots && queueHead < queue.length) {
      const job = queue[queueHead] as Job;
      queue[queueHead++] = undefined as unknown as Job;
      if (job.done) continue; // aborted while waiting
      waiting--;
      job.queued = false;
      running++;
      runTimed(job);
    }
    if (queueHead > 1024 && queueHead * 2 > queue.length) {
      queue.splice(0, queueHead);
      queueHead = 0;
    } else if (queueHead === queue.length) {
      queue.length = 0;
      queueHead = 0;
    }
    if (onIdle !== null && running === 0 && waiting === 0) onIdle();
  }

  function admit(g: GenRequest, res: http.ServerResponse): void {
    const job: Job = {
      req: g,
      res,
      choices: [],
      maxPieces: 0,
      emitted: 0,
      timer: null,
      firstAt: 0,
      done: false,
      queued: false,
      id: (g.kind === "chat" ? "chatcmpl-" : "cmpl-") + ++idSeq,
    };
    if (instant) {
      running++;
      try {
        runInstant(job);
      } finally {
        running--;
      }
      return;
    }
    res.on("close", () => {
      if (job.done) return;
      // The client went away before the answer was complete.
      if (job.queued) {
        job.done = true;
        waiting--;
        success.abort++;
        let pt = 0;
        for (const t of g.promptTokens) pt += t;
        promptTokensTotal += pt;
        pump();
      } else finish(job, true);
    });
    if (g.stream) startStream(job);
    if (running < s.slots && queueHead === queue.length) {
      running++;
      runTimed(job);
    } else {
      job.queued = true;
      waiting++;
      queue.push(job);
    }
  }

  // --- Embeddings ----------------------------------------------------------------------------

  const EMBED_DIM = 64;
  function embed(text: string, dims: number): Float32Array {
    const rnd = prng(fnv(text, FNV0));
    const v = new Float64Array(EMBED_DIM);
    let norm = 0;
    for (let i = 0; i < dims; i++) {
      const x = rnd() / 2147483648 - 1;
      v[i] = x;
      norm += x * x;
    }
    norm = Math.sqrt(norm) || 1;
    const out = new Float32Array(dims);
    for (let i = 0; i < dims; i++) out[i] = (v[i] as number) / norm;
    return out;
  }

  function handleEmbeddings(body: Record<string, unknown>, res: http.ServerResponse, reqId: string | undefined): void {
    const inp = body.input;
    const items: string[] = [];
    let tokens = 0;
    const bad = (): never => {
      throw new BadRequest("input must be a string, an array of strings, or token arrays", "input");
    };
    if (typeof inp === "string") items.push(inp);
    else if (Array.isArray(inp) && inp.length > 0) {
      if (typeof inp[0] === "number") {
        if (!inp.every((t) => Number.isInteger(t))) bad();
        items.push("\u0000tokens:" + inp.join(","));
        tokens += inp.length;
      } else
        for (const x of inp) {
          if (typeof x === "string") items.push(x);
          else if (Array.isArray(x) && x.length > 0 && x.every((t) => Number.isInteger(t))) {
            items.push("\u0000tokens:" + x.join(","));
            tokens += x.length;
          } else bad();
        }
    } else bad();
    for (const t of items) if (!t.startsWith("\u0000tokens:")) tokens += Math.max(1, Math.ceil(t.length / 4));
    const dims = asInt(body.dimensions, "dimensions", 1, EMBED_DIM) ?? EMBED_DIM;
    const enc = body.encoding_format;
    if (enc !== undefined && enc !== null && enc !== "float" && enc !== "base64")
      throw new BadRequest('encoding_format must be "float" or "base64"', "encoding_format");
    if (body.model !== undefined && body.model !== null && typeof body.model !== "string")
      throw new BadRequest("model must be a string", "model");
    const model = typeof body.model === "string" && body.model !== "" ? JSON.stringify(body.model) : servedJson;
    let data = "";
    for (let i = 0; i < items.length; i++) {
      const vec = embed(items[i] as string, dims);
      const e =
        enc === "base64"
          ? `"${Buffer.from(vec.buffer, vec.byteOffset, vec.byteLength).toString("base64")}"`
          : `[${Array.from(vec).join(",")}]`;
      if (i > 0) data += ",";
      data += `{"object":"embedding","index":${i},"embedding":${e}}`;
    }
    promptTokensTotal += tokens;
    success.stop += items.length > 0 ? 1 : 0;
    const id = "embd-" + ++idSeq;
    send(
      res,
      200,
      `{"id":"${id}","object":"list","created":${created},"model":${model},"data":[${data}],` +
        `"usage":{"prompt_tokens":${tokens},"total_tokens":${tokens},"completion_tokens":0,"prompt_tokens_details":null}}`,
      reqId,
    );
  }

  // --- Metrics -------------------------------------------------------------------------------

  function metricsText(): string {
    const out: string[] = [];
    const gauge = (name: string, help: string, v: number) =>
      out.push(`# HELP ${name} ${help}\n# TYPE ${name} gauge\n${name}{${label}} ${fmt(v)}\n`);
    const counter = (name: string, help: string, v: number) =>
      out.push(`# HELP ${name} ${help}\n# TYPE ${name} counter\n${name}{${label}} ${fmt(v)}\n`);
    const usage = Math.min(1, running / s.slots);
    gauge("vllm:num_requests_running", "Number of requests in model execution batches.", running);
    gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.", waiting);
    gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.", usage);
    gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.", usage);
    counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.", promptTokensTotal);
    counter("vllm:generation_tokens_total", "Number of generation tokens processed.", generationTokensTotal);
    if (prefixCache !== null) {
      counter("vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.", prefixCache.queriedTokens);
      counter("vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.", prefixCache.hitTokens);
    }
    out.push(
      "# HELP vllm:request_success_total Count of successfully processed requests.\n" +
        "# TYPE vllm:request_success_total counter\n",
    );
    for (const r of ["stop", "length", "abort"] as const)
      out.push(`vllm:request_success_total{finished_reason="${r}",${label}} ${fmt(success[r])}\n`);
    ttftH.render(out, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", label);
    tpotH.render(out, "vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds.", label);
    e2eH.render(out, "vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", label);
    return out.join("");
  }

  // --- Routing -------------------------------------------------------------------------------

  function handleBody(
    res: http.ServerResponse,
    route: "chat" | "completion" | "embeddings",
    raw: string,
    reqId: string | undefined,
    arrival: number,
  ): void {
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      sendError(res, 400, "We could not parse the JSON body of your request.", null, reqId);
      return;
    }
    if (body === null || typeof body !== "object" || Array.isArray(body)) {
      sendError(res, 400, "The request body must be a JSON object.", null, reqId);
      return;
    }
    try {
      const named = (body as { model?: unknown }).model;
      if (typeof named === "string" && loras.has(named)) loras.served(named);
      if (route === "embeddings") handleEmbeddings(body as Record<string, unknown>, res, reqId);
      else admit(parseCommon(body as Record<string, unknown>, route, reqId, arrival), res);
    } catch (e) {
      if (e instanceof BadRequest) sendError(res, 400, e.message, e.param, reqId);
      else throw e;
    }
  }

  const server = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const arrival = performance.now();
    const h = req.headers["x-request-id"];
    const reqId = typeof h === "string" ? h : undefined;
    let url = req.url ?? "/";
    const q = url.indexOf("?");
    if (q >= 0) url = url.slice(0, q);
    const method = req.method;

    if (url.startsWith("/v1/")) {
      if (expectedAuth !== null && req.headers.authorization !== expectedAuth) {
        drain(req);
        send(res, 401, unauthorizedBody, reqId);
        return;
      }
      if (!ready || stopping) {
        drain(req);
        send(res, 503, stopping ? stoppingBody : loadingBody, reqId);
        return;
      }
      let route: "chat" | "completion" | "embeddings" | null = null;
      if (url === "/v1/chat/completions") route = "chat";
      else if (url === "/v1/completions") route = "completion";
      else if (url === "/v1/embeddings") route = "embeddings";
      else if (url === "/v1/models") {
        drain(req);
        if (method === "GET") send(res, 200, loras.loads.length === 0 ? modelsBody : JSON.stringify({ object: "list", data: [baseModel, ...loras.models(s.model)] }), reqId);
        else sendError(res, 405, "Method Not Allowed", null, reqId);
        return;
      } else if (url === "/v1/load_lora_adapter" || url === "/v1/unload_lora_adapter") {
        if (method !== "POST") {
          drain(req);
          sendError(res, 405, "Method Not Allowed", null, reqId);
          return;
        }
        void readJson(req).then(async (body) => {
          const a = url === "/v1/load_lora_adapter" ? await loras.load(body) : loras.unload(body);
          send(res, a.status, a.body, reqId, a.type === "text" ? "text/plain; charset=utf-8" : JSON_TYPE);
        });
        return;
      }
      if (route === null) {
        drain(req);
        send(res, 404, notFoundBody, reqId);
        return;
      }
      if (method !== "POST") {
        drain(req);
        sendError(res, 405, "Method Not Allowed", null, reqId);
        return;
      }
      const r = route;
      let first: Buffer | null = null;
      let more: Buffer[] | null = null;
      req.on("data", (c: Buffer) => {
        if (first === null) first = c;
        else (more ??= [first]).push(c);
      });
      req.on("end", () => {
        const raw = more !== null ? Buffer.concat(more).toString("utf8") : first !== null ? (first as Buffer).toString("utf8") : "";
        handleBody(res, r, raw, reqId, arrival);
      });
      return;
    }
    drain(req);
    if (url === "/health" || url === "/ping") {
      if (ready && !stopping) send(res, 200, "", reqId);
      else send(res, 503, stopping ? stoppingBody : loadingBody, reqId);
    } else if (url === "/metrics" && method === "GET") {
      send(res, 200, metricsText(), reqId, "text/plain; version=0.0.4; charset=utf-8");
    } else if (url === "/debug/lora" && method === "GET") {
      send(res, 200, JSON.stringify({ loads: loras.loads, requests: Object.fromEntries(loras.requests) }), reqId);
    } else if (url === "/version" && method === "GET") {
      send(res, 200, '{"version":"sim"}', reqId);
    } else send(res, 404, notFoundBody, reqId);
  });

  await new Promise<void>((resolveListen, reject) => {
    server.once("error", reject);
    server.listen(s.port, s.host, () => {
      server.off("error", reject);
      resolveListen();
    });
  });
  const port = (server.address() as AddressInfo).port;

  let closing: Promise<void> | null = null;
  function close(): Promise<void> {
    closing ??= new Promise<void>((resolveClose) => {
      stopping = true;
      if (readyTimer !== null) clearTimeout(readyTimer);
      server.close(() => resolveClose());
      server.closeIdleConnections();
      const force = setTimeout(() => {
        // In-flight requests had 5 s; cut what is left.
        for (const j of queue) if (j && !j.done) j.res.destroy();
        server.closeAllConnections();
      }, 5000);
      force.unref();
      onIdle = () => {
        onIdle = null;
        clearTimeout(force);
        // Let the last responses flush before cutting keep-alive connections.
        setImmediate(() => server.closeAllConnections());
      };
      if (running === 0 && waiting === 0) onIdle();
    });
    return closing;
  }

  return { port, close };
}

/** A small JSON body; undefined when it is not JSON (the caller answers as vLLM does). */
async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const parts: Buffer[] = [];
  for await (const c of req) parts.push(c as Buffer);
  try {
    return JSON.parse(Buffer.concat(parts).toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}

/** Reads and discards a body we do not need, so the connection can be reused. */
function drain(req: http.IncomingMessage): void {
  if (req.complete) return;
  req.resume();
}

// ---------------------------------------------------------------------------------------------
// Run as a script

function isMain(): boolean {
  const arg = process.argv[1];
  if (!arg) return false;
  try {
    return realpathSync(resolve(arg)) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  setLogProcess("sim");
  let settings: SimSettings;
  try {
    settings = simSettingsFromArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`sim: ${(e as Error).message}\n`);
    process.exit(2);
  }
  startSim(settings).then(
    (h) => {
      log.info("sim engine listening", {
        port: h.port,
        host: settings.host,
        model: settings.model,
        ttft_ms: settings.ttftMs,
        // (field names avoid the words the logger masks as secrets)
        rate_per_s: settings.tokensPerSecond,
        slots: settings.slots,
        load_delay_ms: settings.loadDelayMs,
        default_max_new: settings.maxTokensDefault,
        context_length: settings.contextLength,
        auth: settings.apiKeyEnv && process.env[settings.apiKeyEnv] ? "bearer" : "none",
      });
      let signalled = false;
      const stop = (sig: string) => {
        if (signalled) return;
        signalled = true;
        log.info("sim engine stopping", { signal: sig });
        h.close().then(() => process.exit(0));
      };
      process.on("SIGTERM", () => stop("SIGTERM"));
      process.on("SIGINT", () => stop("SIGINT"));
    },
    (e: unknown) => {
      log.error("sim engine failed to start", { err: e instanceof Error ? e.message : String(e) });
      process.exit(1);
    },
  );
}
