// Request bodies of the client API, checked with zod before anything else happens. Unknown
// fields pass through to the engine; the ones we act on are checked strictly.
import { z } from "zod";

/**
 * A decimal string from lo to hi (integers): the string form of `num`, as a pattern the OpenAPI
 * document can carry. ASCII digits only, no exponent: what JSON.stringify writes for such numbers.
 */
function decimalBetween(lo: number, hi: number): RegExp {
  const alts: string[] = [];
  for (let k = Math.max(lo, 0); k < hi; k++) alts.push(`${k}(?:\\.[0-9]+)?`);
  if (hi >= 0) alts.push(`${hi}(?:\\.0+)?`);
  for (let k = 0; k < -lo; k++) alts.push(`-${k}(?:\\.[0-9]+)?`);
  if (lo < 0) alts.push(`${lo}(?:\\.0+)?`);
  return new RegExp(`^(?:${alts.join("|")})$`);
}

/** OpenAI's SDKs and some clients send numbers as strings ("0.7"): accept both, each within range. */
export const num = (min: number, max: number) =>
  z.union([z.number().min(min).max(max), z.string().regex(decimalBetween(min, max), `a number from ${min} to ${max}`).transform(Number)], {
    error: `a number from ${min} to ${max}`,
  });

/** Anything larger than an int32 is a mistake, not a request (engines take int32 counts). */
const MAX_INT = 2 ** 31 - 1;
const count = () => z.number().int().positive().max(MAX_INT);
const penalty = num(-2, 2).nullable().optional();
export const identifier = z.string().regex(/^[A-Za-z0-9_.:-]{1,64}$/, "1 to 64 letters, digits, _ . : or -");

/**
 * Standard base64 (RFC 4648 §4, padded). Checked here so a broken picture is a 400, not an engine's
 * 500. The check is a length and a character class (a regex of 4-character groups overflows V8's
 * stack on a picture of megabytes); BASE64_PATTERN says the same for the OpenAPI document, and
 * tests/unit/schema-patterns.test.ts holds the two together.
 */
export const isBase64 = (s: string): boolean => s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s);
export const BASE64_BODY = "(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?";
export const BASE64_PATTERN = `^${BASE64_BODY}$`;
export const base64 = () => z.string().min(1).refine(isBase64, "not valid base64").meta({ pattern: BASE64_PATTERN });

/** An http(s) URL of printable ASCII: a raw space or non-ASCII character is not a URL. */
export const HTTP_URL = /^https?:\/\/[!-~]+$/;
const DATA_URL = /^data:([a-z]+\/[A-Za-z0-9.+-]+);base64,/;
/** An http(s) URL, or a data URL of this kind whose payload is valid base64; the pattern says the same. */
export const mediaUrl = (kind: string) =>
  z
    .string()
    .check((ctx) => {
      const url = ctx.value;
      const m = DATA_URL.exec(url);
      if (m) {
        if (!m[1]!.startsWith(`${kind}/`)) ctx.issues.push({ code: "custom", message: `a data URL of a ${kind}, not ${m[1]}`, input: url });
        else if (!isBase64(url.slice(m[0].length))) ctx.issues.push({ code: "custom", message: "the data URL's payload is not valid base64", input: url });
      } else if (!HTTP_URL.test(url)) ctx.issues.push({ code: "custom", message: `an http(s) URL or a data:${kind}/…;base64, URL`, input: url });
    })
    .meta({ pattern: `^(?:https?://[!-~]+|data:${kind}/[A-Za-z0-9.+-]+;base64,${BASE64_BODY})$` });

const contentPart = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text"), text: z.string() }),
  z.looseObject({ type: z.literal("image_url"), image_url: z.looseObject({ url: mediaUrl("image"), detail: z.enum(["auto", "low", "high"]).optional() }) }),
  z.looseObject({ type: z.literal("input_audio"), input_audio: z.looseObject({ data: base64(), format: z.string().min(1) }) }),
  z.looseObject({ type: z.literal("audio_url"), audio_url: z.looseObject({ url: mediaUrl("audio") }) }),
  z.looseObject({ type: z.literal("video_url"), video_url: z.looseObject({ url: mediaUrl("video") }) }),
  z.looseObject({ type: z.literal("file"), file: z.looseObject({ file_id: z.string().optional(), file_data: z.string().optional(), filename: z.string().optional() }) }),
  z.looseObject({ type: z.literal("refusal"), refusal: z.string() }),
]);
const toolCall = z.looseObject({
  id: z.string().min(1).max(256),
  type: z.literal("function"),
  function: z.looseObject({ name: z.string().min(1).max(256), arguments: z.string() }),
});
const message = z.looseObject({
  role: z.enum(["system", "developer", "user", "assistant", "tool", "function"]),
  content: z.union([z.string(), z.array(contentPart), z.null()], { error: "a string, an array of content parts, or null" }).optional(),
  name: z.string().max(256).optional(),
  tool_calls: z.array(toolCall).optional(),
  tool_call_id: z.string().max(256).optional(),
});
const tool = z.looseObject({
  type: z.literal("function"),
  function: z.looseObject({ name: identifier, description: z.string().optional(), parameters: z.record(z.string(), z.unknown()).optional(), strict: z.boolean().nullable().optional() }),
});
const toolChoice = z.union([z.enum(["none", "auto", "required"]), z.looseObject({ type: z.literal("function"), function: z.looseObject({ name: identifier }) })], {
  error: "'none', 'auto', 'required' or {type: 'function', function: {name}}",
});
const stop = z.union([z.string(), z.array(z.string()).max(4)], { error: "a string or at most 4 strings" }).nullable().optional();
const logitBias = z.record(z.string().regex(/^\d+$/, "token ids"), z.number().min(-100).max(100)).nullable().optional();
/** Structured output, as OpenAI takes it; the engine's guided decoding does the work. */
const responseFormat = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text") }),
  z.looseObject({ type: z.literal("json_object") }),
  z.looseObject({
    type: z.literal("json_schema"),
    json_schema: z.looseObject({
      name: identifier,
      description: z.string().optional(),
      schema: z.record(z.string(), z.unknown()).optional(),
      strict: z.boolean().nullable().optional(),
    }),
  }),
]);
const streamOptions = z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional();

/**
 * OpenAI's rule: top_logprobs only with logprobs true (engines refuse it otherwise). Checked, and
 * said in the OpenAPI document as an if/then.
 */
function topLogprobsNeedLogprobs<S extends z.ZodObject>(schema: S) {
  return schema
    .check((ctx) => {
      const v = ctx.value as { top_logprobs?: number | null; logprobs?: boolean | null };
      if (typeof v.top_logprobs === "number" && v.logprobs !== true) ctx.issues.push({ code: "custom", path: ["top_logprobs"], message: "needs logprobs: true", input: v.top_logprobs });
    })
    .meta({ if: { required: ["top_logprobs"], properties: { top_logprobs: { type: "integer" } } }, then: { required: ["logprobs"], properties: { logprobs: { const: true } } } });
}

/** Sampling settings chat and text completions share. */
const sampling = {
  temperature: num(0, 2).nullable().optional(),
  top_p: num(0, 1).nullable().optional(),
  n: z.number().int().min(1).max(16).nullable().optional(),
  seed: z.number().int().nullable().optional(),
  stop,
  presence_penalty: penalty,
  frequency_penalty: penalty,
  logit_bias: logitBias,
};

export const chatCompletionRequest = topLogprobsNeedLogprobs(z.looseObject({
  model: z.string().min(1).max(256),
  messages: z.array(message).min(1),
  stream: z.boolean().optional(),
  stream_options: streamOptions,
  max_tokens: count().nullable().optional(),
  max_completion_tokens: count().nullable().optional(),
  ...sampling,
  logprobs: z.boolean().nullable().optional(),
  top_logprobs: z.number().int().min(0).max(20).nullable().optional(),
  tools: z.array(tool).max(128).optional(),
  tool_choice: toolChoice.optional(),
  response_format: responseFormat.nullable().optional(),
  user: z.string().max(256).optional(),
}));
export type ChatCompletionRequest = z.infer<typeof chatCompletionRequest>;

export const completionRequest = z.looseObject({
  model: z.string().min(1).max(256),
  // Never empty: there is nothing to complete (engines refuse it too).
  prompt: z.union([z.string(), z.array(z.string()).min(1), z.array(z.number().int().min(0)).min(1), z.array(z.array(z.number().int().min(0)).min(1)).min(1)], {
    error: "a string, an array of strings, an array of token ids or an array of such arrays",
  }),
  stream: z.boolean().optional(),
  stream_options: streamOptions,
  max_tokens: count().nullable().optional(),
  ...sampling,
  logprobs: z.number().int().min(0).max(5).nullable().optional(),
  echo: z.boolean().nullable().optional(),
  suffix: z.string().nullable().optional(),
  user: z.string().max(256).optional(),
});

export const embeddingRequest = z.looseObject({
  model: z.string().min(1).max(256),
  // OpenAI's limit: at most 2048 inputs per request.
  input: z.union([z.string(), z.array(z.string()).min(1).max(2048), z.array(z.number().int().min(0)).min(1), z.array(z.array(z.number().int().min(0)).min(1)).min(1).max(2048)], {
    error: "a string, an array of 1 to 2048 strings, or token ids",
  }),
  encoding_format: z.enum(["float", "base64"]).optional(),
  dimensions: z.number().int().positive().max(65_536).optional(),
  user: z.string().max(256).optional(),
});

/** POST /v1/rerank, in the Jina/Cohere shape vLLM serves (`--task score` models): documents ranked against the query. */
export const rerankRequest = z.looseObject({
  model: z.string().min(1).max(256),
  query: z.string(),
  documents: z.union([z.array(z.string()).min(1).max(1000), z.array(z.looseObject({ text: z.string() })).min(1).max(1000)], {
    error: "an array of 1 to 1000 strings, or of objects with text",
  }),
  top_n: z.number().int().min(0).max(1000).optional(),
  return_documents: z.boolean().optional(),
  user: z.string().max(256).optional(),
});

/** The first problem zod found, as OpenAI reports it: a message and the field at fault (null: the body). */
export function firstIssue(err: z.ZodError): { message: string; param: string | null } {
  const { path, message } = innermost(err.issues[0]!);
  const param = path.map(String).join(".");
  return { message: `${param || "body"}: ${message}`, param: param || null };
}

type Issue = { code: string; path: PropertyKey[]; message: string; errors?: Issue[][] };

/** Inside a union, the branch whose type matched says what is wrong (a bad URL in an image part, not
 * "not a string or an array"): of those, the one with the fewest problems. When no branch's type
 * matched, the union's own message. */
function innermost(issue: Issue): { path: PropertyKey[]; message: string } {
  if (issue.code !== "invalid_union") return issue;
  const matched = (issue.errors ?? []).filter((b) => b.length > 0 && !b.some((i) => i.path.length === 0 && i.code === "invalid_type"));
  if (!matched.length) return issue;
  const best = matched.reduce((a, b) => (b.length < a.length || (b.length === a.length && b[0]!.path.length > a[0]!.path.length) ? b : a));
  const inner = innermost(best[0]!);
  return { path: [...issue.path, ...inner.path], message: inner.message };
}

/**
 * Exactly one of `keys` present: checked, and said in the OpenAPI document as a `oneOf` of the
 * branches that each require one of them, so a body with both (or neither) is refused by both.
 */
export function exactlyOne<S extends z.ZodObject>(schema: S, keys: string[], message: string) {
  return schema
    .check((ctx) => {
      const given = keys.filter((k) => (ctx.value as Record<string, unknown>)[k] !== undefined);
      if (given.length !== 1) ctx.issues.push({ code: "custom", path: [keys[0]!], message, input: ctx.value });
    })
    .meta({ oneOf: keys.map((k) => ({ required: [k] })) });
}
