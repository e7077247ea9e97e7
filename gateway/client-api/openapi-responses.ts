// What the client API answers, as zod shapes for its OpenAPI document only: the bodies come from
// the engine or from the handlers, so these describe, they do not check. Loose, as the engines add
// fields of their own.
import { z } from "zod";

export const openAIError = z.object({
  error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }),
});
export const anthropicError = z.object({ type: z.literal("error"), error: z.object({ type: z.string(), message: z.string() }) });

const usage = z.looseObject({ prompt_tokens: z.number().int(), completion_tokens: z.number().int().optional(), total_tokens: z.number().int() });

export const chatCompletion = z.looseObject({
  id: z.string(),
  object: z.literal("chat.completion"),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.looseObject({
      index: z.number().int(),
      message: z.looseObject({ role: z.literal("assistant"), content: z.string().nullable(), tool_calls: z.array(z.looseObject({ id: z.string() })).optional() }),
      finish_reason: z.string().nullable(),
    }),
  ),
  usage: usage.optional(),
});

export const completion = z.looseObject({
  id: z.string(),
  object: z.literal("text_completion"),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(z.looseObject({ index: z.number().int(), text: z.string(), finish_reason: z.string().nullable() })),
  usage: usage.optional(),
});

export const embeddingList = z.looseObject({
  object: z.literal("list"),
  model: z.string(),
  data: z.array(z.looseObject({ object: z.literal("embedding"), index: z.number().int(), embedding: z.union([z.array(z.number()), z.string()]) })),
  usage,
});

export const model = z.object({
  id: z.string(),
  object: z.literal("model"),
  created: z.number().int(),
  owned_by: z.string(),
  loaded: z.boolean().describe("has ready replicas"),
  replicas: z.number().int(),
  context_length: z.number().int().nullable(),
  max_output: z.number().int().nullable().describe("the most max_tokens a request may ask for"),
  licence: z.string().nullable(),
});
export const modelList = z.object({ object: z.literal("list"), data: z.array(model) });

export const anthropicMessage = z.looseObject({
  id: z.string(),
  type: z.literal("message"),
  role: z.literal("assistant"),
  model: z.string(),
  content: z.array(z.looseObject({ type: z.string() })),
  stop_reason: z.string().nullable(),
  stop_sequence: z.string().nullable(),
  usage: z.looseObject({ input_tokens: z.number().int(), output_tokens: z.number().int() }),
});
export const tokenCount = z.object({ input_tokens: z.number().int() });

export const file = z.looseObject({ id: z.string(), object: z.literal("file"), bytes: z.number().int(), created_at: z.number().int(), filename: z.string(), purpose: z.string() });
export const fileList = z.object({ object: z.literal("list"), data: z.array(file), has_more: z.boolean() });
export const fileDeleted = z.object({ id: z.string(), object: z.literal("file"), deleted: z.literal(true) });

/** A picture, 3D or ComfyUI job: its id, state, progress and, when done, its result. */
export const job = z.looseObject({ id: z.string(), object: z.string(), status: z.string() });
export const jobList = z.object({ object: z.literal("list"), data: z.array(job) });

export const health = z.object({ ok: z.boolean() });
export const openApiDocument = z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.record(z.string(), z.unknown()) });

/** OpenAI's Responses API: a response, its deletion, and a page of its input items. */
export const response = z.looseObject({
  id: z.string(),
  object: z.literal("response"),
  created_at: z.number().int(),
  status: z.enum(["completed", "incomplete", "in_progress", "failed"]),
  model: z.string(),
  output: z.array(z.looseObject({ type: z.string(), id: z.string() })),
  usage: z.looseObject({ input_tokens: z.number().int(), output_tokens: z.number().int(), total_tokens: z.number().int() }).nullable(),
});
export const responseDeleted = z.object({ id: z.string(), object: z.literal("response"), deleted: z.literal(true) });
export const responseItemList = z.object({
  object: z.literal("list"),
  data: z.array(z.looseObject({ id: z.string(), type: z.string() })),
  first_id: z.string().nullable(),
  last_id: z.string().nullable(),
  has_more: z.boolean(),
});

export const rerankResult = z.looseObject({
  id: z.string(),
  model: z.string(),
  usage: z.looseObject({ total_tokens: z.number().int() }),
  results: z.array(z.looseObject({ index: z.number().int(), relevance_score: z.number(), document: z.looseObject({ text: z.string() }).optional() })),
});

export const moderation = z.looseObject({
  id: z.string(),
  model: z.string(),
  results: z.array(z.looseObject({ flagged: z.boolean(), categories: z.record(z.string(), z.boolean()), category_scores: z.record(z.string(), z.number()) })),
});

export const transcription = z.looseObject({ text: z.string() });
