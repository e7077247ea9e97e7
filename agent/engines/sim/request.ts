// A generation request (chat or completions) read and checked the way vLLM's OpenAI server does,
// with its 400s: the prompt hashed for the deterministic answer, the token limit against the
// context, the stop strings, tools, reasoning, response_format and logprobs.
import { judgeVerdict } from "./judge.ts";
import { FNV0, VOCAB, VOCAB_N, fnv, prng } from "./generation.ts";
import { sampleJsonObject, sampleObject, sampleValue } from "./json-sample.ts";
import { promptPrefix, type PromptPrefix } from "./prefix-cache.ts";

/** A request the sim refuses: answered 400 in OpenAI's error shape, naming the parameter. */
export class BadRequest extends Error {
  constructor(
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

type Stops = string[] | null;

export interface GenRequest {
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
  /** vLLM's stream_options.continuous_usage_stats: every chunk carries the usage so far. */
  continuousUsage: boolean;
  echo: string[] | null; // completions with echo: the prompt texts
  tool: { name: string; args: string } | null; // chat: answer with a call of this tool
  reasoning: boolean; // chat: think first
  structured: string | null; // chat: the JSON a response_format asks for
  logprobs: number; // top alternatives per token when logprobs were asked for; -1: not asked
  requestId: string | undefined;
  arrival: number; // performance.now() ms
  prefix: PromptPrefix | null; // null unless the prefix cache is modelled
}

/** What the server settles for every request: its model, its context and its defaults. */
export interface RequestDefaults {
  servedJson: string; // the served model's name, JSON-encoded
  contextLength: number;
  maxTokensDefault: number;
  reasoning: boolean;
  /** Chats are answered with a safety verdict in Llama Guard's format (./judge.ts). */
  guardJudge?: boolean;
  /** Whether the prefix cache is modelled (then each request's prompt beginning is kept). */
  prefixCache: boolean;
}

/** An optional integer parameter within [min, max]. */
export function asInt(v: unknown, name: string, min: number, max: number): number | undefined {
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

export function contentText(c: unknown, i: number): string {
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
/** A chat's last user turn starting with this is echoed back whole (see chatPrompt). */
export const ECHO_PREFIX = "echo: ";

/** The prompt part of a request: what the answer is derived from, and what it asks of the answer. */
type PromptPart = Pick<GenRequest, "promptHash" | "promptTokens" | "echo" | "tool" | "reasoning" | "structured" | "logprobs">;

function chatPrompt(body: Record<string, unknown>, d: RequestDefaults): PromptPart {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0)
    throw new BadRequest("messages must be a non-empty array", "messages");
  let promptHash = FNV0;
  let chars = 0;
  let lastUser = "";
  // A judge reads the last turn, whoever's: a user's prompt, or an answer it is asked about (Llama Guard's response check).
  let lastTurn = "";
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as { role?: unknown; content?: unknown } | null;
    if (m === null || typeof m !== "object" || Array.isArray(m))
      throw new BadRequest(`messages[${i}] must be an object`, `messages[${i}]`);
    if (typeof m.role !== "string") throw new BadRequest(`messages[${i}].role must be a string`, `messages[${i}].role`);
    const text = contentText(m.content, i);
    if (m.role === "user") lastUser = text;
    lastTurn = text;
    chars += text.length;
    promptHash = fnv(text, fnv(m.role, promptHash) ^ 0x1f);
  }
  const promptTokens = [Math.max(1, Math.ceil(chars / 4))];
  const tool = toolToCall(body, (messages[messages.length - 1] as { role: string }).role);
  const ctk = body.chat_template_kwargs as { enable_thinking?: unknown } | null | undefined;
  const asked = ctk !== null && typeof ctk === "object" ? ctk.enable_thinking : undefined;
  const reasoning = typeof asked === "boolean" ? asked : d.reasoning;
  // Echo mode: a last user turn starting "echo: " is answered with itself, 8 characters a token, so
  // tests can read what reached the engine (the guard's redaction) and see text split across events.
  const structured = d.guardJudge ? judgeVerdict(lastTurn) : lastUser.startsWith(ECHO_PREFIX) ? lastUser : responseFormat(body.response_format, promptHash);
  if (body.logprobs !== undefined && body.logprobs !== null && typeof body.logprobs !== "boolean")
    throw new BadRequest("logprobs must be a boolean", "logprobs");
  const top = asInt(body.top_logprobs, "top_logprobs", 0, 20);
  if (top !== undefined && body.logprobs !== true) throw new BadRequest("top_logprobs needs logprobs set to true", "top_logprobs");
  const logprobs = body.logprobs === true ? (top ?? 0) : -1;
  return { promptHash, promptTokens, echo: null, tool, reasoning, structured, logprobs };
}

function completionPrompt(body: Record<string, unknown>): PromptPart {
  const p = body.prompt;
  const prompts: (string | number[])[] = [];
  if (typeof p === "string") prompts.push(p);
  else if (Array.isArray(p) && p.length > 0) {
    if (typeof p[0] === "number") prompts.push(p as number[]);
    else prompts.push(...(p as (string | number[])[]));
  } else throw new BadRequest("prompt must be a string, an array of strings, or token arrays", "prompt");
  let promptHash = FNV0;
  const promptTokens: number[] = [];
  for (const q of prompts) {
    if (typeof q === "string") {
      promptTokens.push(Math.max(1, Math.ceil(q.length / 4)));
      promptHash = fnv(q, promptHash ^ 0x2f);
    } else if (Array.isArray(q) && q.length > 0 && q.every((t) => Number.isInteger(t))) {
      promptTokens.push(q.length);
      promptHash = fnv(q.join(","), promptHash ^ 0x3f);
    } else throw new BadRequest("prompt must be a string, an array of strings, or token arrays", "prompt");
  }
  const echo = body.echo === true ? prompts.map((q) => (typeof q === "string" ? q : "")) : null;
  const logprobs = asInt(body.logprobs, "logprobs", 0, 5) ?? -1;
  return { promptHash, promptTokens, echo, tool: null, reasoning: false, structured: null, logprobs };
}

/** A chat or completions body as a request to generate for; throws BadRequest when it is not one. */
export function parseGenRequest(body: Record<string, unknown>, kind: "chat" | "completion", d: RequestDefaults, reqId: string | undefined, arrival: number): GenRequest {
  const prompt = kind === "chat" ? chatPrompt(body, d) : completionPrompt(body);
  const { promptTokens, structured } = prompt;
  if (body.model !== undefined && body.model !== null && typeof body.model !== "string")
    throw new BadRequest("model must be a string", "model");
  const model = typeof body.model === "string" && body.model !== "" ? JSON.stringify(body.model) : d.servedJson;
  const n = asInt(body.n, "n", 1, 128) ?? 1;
  let maxPrompt = 0;
  for (const t of promptTokens) if (t > maxPrompt) maxPrompt = t;
  const room = d.contextLength - maxPrompt;
  const asked =
    asInt(body.max_completion_tokens, "max_completion_tokens", 1, 100_000_000) ??
    asInt(body.max_tokens, "max_tokens", 1, 100_000_000);
  if (room <= 0 || (asked !== undefined && asked > room))
    throw new BadRequest(
      `This model's maximum context length is ${d.contextLength} tokens. However, you requested ` +
        `${maxPrompt + (asked ?? 0)} tokens (${maxPrompt} in the messages, ${asked ?? 0} in the completion). ` +
        `Please reduce the length of the messages or completion.`,
      asked !== undefined ? "max_tokens" : "messages",
    );
  // A structured answer ends where its JSON does, as guided decoding's does: no short default cuts it.
  const limit = asked ?? (structured !== null ? room : Math.min(d.maxTokensDefault, room));
  const seedV = body.seed;
  if (seedV !== undefined && seedV !== null && (typeof seedV !== "number" || !Number.isInteger(seedV)))
    throw new BadRequest("seed must be an integer", "seed");
  const stream = body.stream === true;
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== "boolean")
    throw new BadRequest("stream must be a boolean", "stream");
  const so = body.stream_options as { include_usage?: unknown; continuous_usage_stats?: unknown } | null | undefined;
  const includeUsage = stream && so !== null && typeof so === "object" && so.include_usage === true;
  const continuousUsage = includeUsage && so.continuous_usage_stats === true;
  return {
    kind,
    model,
    ...prompt,
    n,
    limit,
    seed: typeof seedV === "number" ? seedV : 0,
    stops: parseStops(body.stop),
    stream,
    includeUsage,
    continuousUsage,
    requestId: reqId,
    arrival,
    prefix: d.prefixCache ? promptPrefix(body, promptTokens.reduce((a, b) => a + b, 0)) : null,
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