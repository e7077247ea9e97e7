// Request bodies of OpenAI's Responses API (POST /v1/responses), checked with zod. What the gateway
// acts on is checked strictly; unknown fields are accepted and dropped, as the engine speaks chat.
// Only what a self-hosted chat engine can do is taken: function tools, text and pictures by URL.
import { z } from "zod";
import { identifier, mediaUrl, num } from "../schemas.ts";

const MAX_INT = 2 ** 31 - 1;

const inputText = z.looseObject({ type: z.literal("input_text"), text: z.string() });
const outputText = z.looseObject({ type: z.literal("output_text"), text: z.string() });
const inputImage = z.looseObject({
  type: z.literal("input_image"),
  image_url: mediaUrl("image"),
  detail: z.enum(["auto", "low", "high"]).optional(),
});
/** An earlier answer's refusal, sent back as a client replays a conversation: kept as its text. */
const refusal = z.looseObject({ type: z.literal("refusal"), refusal: z.string() });

const userContent = z.union([z.string(), z.array(z.discriminatedUnion("type", [inputText, inputImage])).min(1)]);
const assistantContent = z.union([z.string(), z.array(z.discriminatedUnion("type", [outputText, inputText, refusal])).min(1)]);

const inputMessage = z.discriminatedUnion("role", [
  z.looseObject({ type: z.literal("message").optional(), role: z.enum(["user", "system", "developer"]), content: userContent }),
  z.looseObject({ type: z.literal("message").optional(), role: z.literal("assistant"), content: assistantContent, id: z.string().optional() }),
]);
const functionCall = z.looseObject({
  type: z.literal("function_call"),
  call_id: z.string().min(1).max(256),
  name: identifier,
  arguments: z.string(),
  id: z.string().optional(),
});
const functionCallOutput = z.looseObject({
  type: z.literal("function_call_output"),
  call_id: z.string().min(1).max(256),
  output: z.union([z.string(), z.array(inputText).min(1)]),
  id: z.string().optional(),
});

/** One input item: a message (its `type` may be left out, as OpenAI allows), a function call or its output. */
export const inputItem = z.union([inputMessage, functionCall, functionCallOutput], {
  error: "a message {role, content}, a function_call {call_id, name, arguments} or a function_call_output {call_id, output}",
});
export type InputItem = z.infer<typeof inputItem>;

const functionTool = z.looseObject({
  type: z.literal("function"),
  name: identifier,
  description: z.string().nullable().optional(),
  parameters: z.record(z.string(), z.unknown()).nullable().optional(),
  strict: z.boolean().nullable().optional(),
});

const toolChoice = z.union([z.enum(["none", "auto", "required"]), z.looseObject({ type: z.literal("function"), name: identifier })], {
  error: "'none', 'auto', 'required' or {type: 'function', name}",
});

const textFormat = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text") }),
  z.looseObject({ type: z.literal("json_object") }),
  z.looseObject({
    type: z.literal("json_schema"),
    name: identifier,
    schema: z.record(z.string(), z.unknown()),
    description: z.string().optional(),
    strict: z.boolean().nullable().optional(),
  }),
]);

export const responsesRequest = z.looseObject({
  model: z.string().min(1).max(256),
  input: z.union([z.string(), z.array(inputItem).min(1)], { error: "a string or a non-empty array of input items" }),
  instructions: z.string().nullable().optional(),
  previous_response_id: z.string().min(1).max(256).nullable().optional(),
  tools: z.array(functionTool).optional(),
  tool_choice: toolChoice.optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  text: z.looseObject({ format: textFormat.optional() }).optional(),
  max_output_tokens: z.number().int().min(1).max(MAX_INT).nullable().optional(),
  temperature: num(0, 2).nullable().optional(),
  top_p: num(0, 1).nullable().optional(),
  reasoning: z.looseObject({ effort: z.enum(["none", "minimal", "low", "medium", "high"]).nullable().optional() }).nullable().optional(),
  metadata: z
    .record(z.string().max(64), z.string().max(512))
    .refine((m) => Object.keys(m).length <= 16, "at most 16 keys")
    .meta({ maxProperties: 16 })
    .nullable()
    .optional(),
  user: z.string().max(256).optional(),
  store: z.boolean().nullable().optional(),
  stream: z.boolean().nullable().optional(),
});
export type ResponsesRequest = z.infer<typeof responsesRequest>;

/** GET /v1/responses/{id}/input_items: a page of the items, newest first unless asked. */
export const inputItemsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(["asc", "desc"]).default("desc"),
  after: z.string().optional(),
});
