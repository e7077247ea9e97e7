// Request bodies of the client API, checked with zod before anything else happens. Unknown
// fields pass through to the engine; the ones we act on are checked strictly.
import { z } from "zod";

/** OpenAI's SDKs and some clients send numbers as strings ("0.7"): accept both. */
const num = (min: number, max: number) => z.coerce.number().min(min).max(max);

/** Anything larger than an int32 is a mistake, not a request (engines take int32 counts). */
const MAX_INT = 2 ** 31 - 1;
const count = () => z.number().int().positive().max(MAX_INT);
const penalty = num(-2, 2).nullable().optional();
const identifier = z.string().regex(/^[A-Za-z0-9_.:-]{1,64}$/, "1 to 64 letters, digits, _ . : or -");

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** Standard base64 (RFC 4648 §4), checked here so a broken picture is a 400, not an engine's 500. */
export const isBase64 = (s: string): boolean => s.length % 4 === 0 && BASE64.test(s);
const DATA_URL = /^data:([a-z]+\/[a-z0-9.+-]+);base64,/i;
/** An http(s) URL, or a data URL whose payload is valid base64. */
const mediaUrl = (kind: string) =>
  z.string().min(1).check((ctx) => {
    const url = ctx.value;
    const m = DATA_URL.exec(url);
    if (m) {
      if (!m[1]!.toLowerCase().startsWith(`${kind}/`)) ctx.issues.push({ code: "custom", message: `a data URL of a ${kind}, not ${m[1]}`, input: url });
      else if (!isBase64(url.slice(m[0].length))) ctx.issues.push({ code: "custom", message: "the data URL's payload is not valid base64", input: url });
    } else if (!/^https?:\/\/[^\s]+$/i.test(url)) ctx.issues.push({ code: "custom", message: `an http(s) URL or a data:${kind}/…;base64, URL`, input: url });
  });

const contentPart = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text"), text: z.string() }),
  z.looseObject({ type: z.literal("image_url"), image_url: z.looseObject({ url: mediaUrl("image"), detail: z.enum(["auto", "low", "high"]).optional() }) }),
  z.looseObject({ type: z.literal("input_audio"), input_audio: z.looseObject({ data: z.string().min(1).refine(isBase64, "not valid base64"), format: z.string().min(1) }) }),
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

export const chatCompletionRequest = z.looseObject({
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
});
export type ChatCompletionRequest = z.infer<typeof chatCompletionRequest>;

export const completionRequest = z.looseObject({
  model: z.string().min(1).max(256),
  prompt: z.union([z.string(), z.array(z.string()), z.array(z.number().int().min(0)), z.array(z.array(z.number().int().min(0)))], {
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
  input: z.union([z.string(), z.array(z.string()).min(1).max(2048), z.array(z.number().int().min(0)).min(1), z.array(z.array(z.number().int().min(0))).min(1).max(2048)], {
    error: "a string, an array of 1 to 2048 strings, or token ids",
  }),
  encoding_format: z.enum(["float", "base64"]).optional(),
  dimensions: z.number().int().positive().max(65_536).optional(),
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
