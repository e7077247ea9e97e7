// Request bodies of the client API, checked with zod before anything else happens. Unknown
// fields pass through to the engine; the ones we act on are checked strictly.
import { z } from "zod";

/** OpenAI's SDKs and some clients send numbers as strings ("0.7"): accept both. */
const num = (min: number, max: number) => z.coerce.number().min(min).max(max);

const contentPart = z.looseObject({ type: z.string() });
const message = z.looseObject({
  role: z.enum(["system", "developer", "user", "assistant", "tool", "function"]),
  content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
  name: z.string().optional(),
});

export const chatCompletionRequest = z.looseObject({
  model: z.string().min(1).max(256),
  messages: z.array(message).min(1),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
  max_tokens: z.number().int().positive().nullable().optional(),
  max_completion_tokens: z.number().int().positive().nullable().optional(),
  temperature: num(0, 2).nullable().optional(),
  top_p: num(0, 1).nullable().optional(),
  n: z.number().int().min(1).max(16).nullable().optional(),
  seed: z.number().int().nullable().optional(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).nullable().optional(),
  user: z.string().max(256).optional(),
});
export type ChatCompletionRequest = z.infer<typeof chatCompletionRequest>;

export const completionRequest = z.looseObject({
  model: z.string().min(1).max(256),
  prompt: z.union([z.string(), z.array(z.string()), z.array(z.number().int()), z.array(z.array(z.number().int()))]),
  stream: z.boolean().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
  max_tokens: z.number().int().positive().nullable().optional(),
  temperature: num(0, 2).nullable().optional(),
  top_p: num(0, 1).nullable().optional(),
  n: z.number().int().min(1).max(16).nullable().optional(),
  seed: z.number().int().nullable().optional(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).nullable().optional(),
});

export const embeddingRequest = z.looseObject({
  model: z.string().min(1).max(256),
  input: z.union([z.string(), z.array(z.string()).min(1), z.array(z.number().int()).min(1), z.array(z.array(z.number().int())).min(1)]),
  encoding_format: z.enum(["float", "base64"]).optional(),
  dimensions: z.number().int().positive().optional(),
  user: z.string().max(256).optional(),
});

/** The first problem zod found, as OpenAI reports it: a message and the field at fault. */
export function firstIssue(err: z.ZodError): { message: string; param: string } {
  const issue = err.issues[0]!;
  const param = issue.path.map(String).join(".");
  return { message: `${param || "body"}: ${issue.message}`, param };
}
