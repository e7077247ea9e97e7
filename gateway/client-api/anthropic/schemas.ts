// Request bodies of the Anthropic Messages API (/v1/messages, /v1/messages/count_tokens), checked
// with zod. Unknown fields are accepted and dropped: the engine speaks OpenAI and would not know them.
import { z } from "zod";
import { HTTP_URL, base64 } from "../schemas.ts";

const cacheControl = z.looseObject({ type: z.string() }).nullable().optional();

const textBlock = z.looseObject({ type: z.literal("text"), text: z.string(), cache_control: cacheControl });
const imageBlock = z.looseObject({
  type: z.literal("image"),
  source: z.discriminatedUnion("type", [
    z.looseObject({ type: z.literal("base64"), media_type: z.enum(["image/jpeg", "image/png", "image/gif", "image/webp"]), data: base64() }),
    z.looseObject({ type: z.literal("url"), url: z.string().regex(HTTP_URL, "an http(s) URL") }),
  ]),
  cache_control: cacheControl,
});
const toolUseBlock = z.looseObject({ type: z.literal("tool_use"), id: z.string().min(1), name: z.string().min(1), input: z.record(z.string(), z.unknown()) });
const toolResultBlock = z.looseObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.discriminatedUnion("type", [textBlock, imageBlock]))]).optional(),
  is_error: z.boolean().optional(),
});
/** Earlier thinking, sent back by clients that replay a conversation; engines do not take it back. */
const thinkingBlock = z.looseObject({ type: z.literal("thinking"), thinking: z.string(), signature: z.string() });
const redactedThinkingBlock = z.looseObject({ type: z.literal("redacted_thinking"), data: z.string() });

// As Anthropic's API: a user turn holds what the caller gives (text, pictures, tool results), an
// assistant turn what a model gave (text, tool calls, thinking). Thinking in a user turn is refused,
// as there it would translate to no message at all. An empty list of blocks is no message either.
export const userBlock = z.discriminatedUnion("type", [textBlock, imageBlock, toolResultBlock]);
export type UserBlock = z.infer<typeof userBlock>;
const assistantBlock = z.discriminatedUnion("type", [textBlock, toolUseBlock, thinkingBlock, redactedThinkingBlock]);

const message = z.discriminatedUnion("role", [
  z.looseObject({ role: z.literal("user"), content: z.union([z.string(), z.array(userBlock).min(1)]) }),
  z.looseObject({ role: z.literal("assistant"), content: z.union([z.string(), z.array(assistantBlock).min(1)]) }),
]);
export type AnthropicMessage = z.infer<typeof message>;

const tool = z.looseObject({
  name: z.string().min(1).max(128),
  description: z.string().optional(),
  input_schema: z.looseObject({ type: z.literal("object") }),
});

const toolChoice = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("auto"), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal("any"), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal("tool"), name: z.string().min(1), disable_parallel_tool_use: z.boolean().optional() }),
  z.looseObject({ type: z.literal("none") }),
]);

const thinking = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("enabled"), budget_tokens: z.number().int().min(1) }),
  z.looseObject({ type: z.literal("disabled") }),
]);

/** What /v1/messages and /v1/messages/count_tokens share: the prompt. */
const prompt = {
  model: z.string().min(1).max(256),
  messages: z.array(message).min(1),
  system: z.union([z.string(), z.array(textBlock)]).optional(),
  tools: z.array(tool).optional(),
  tool_choice: toolChoice.optional(),
  thinking: thinking.optional(),
};

export const messagesRequest = z.looseObject({
  ...prompt,
  max_tokens: z.number().int().positive().max(2 ** 31 - 1),
  stream: z.boolean().optional(),
  stop_sequences: z.array(z.string()).optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().min(0).optional(),
  metadata: z.looseObject({ user_id: z.string().max(256).nullable().optional() }).optional(),
});
export type MessagesRequest = z.infer<typeof messagesRequest>;

export const countTokensRequest = z.looseObject(prompt);
export type CountTokensRequest = z.infer<typeof countTokensRequest>;
