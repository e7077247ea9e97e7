// /v1/messages/count_tokens without asking an engine: the prompt as the engine would get it,
// counted the way the sim counts prompt tokens (a token per 4 characters of message text, at
// least 1), so for a sim model it equals the input_tokens a /v1/messages call reports. Real
// tokenizers differ; this is an estimate for budgeting, not a bill.
import { messagesTokens } from "../../router/request-limits.ts";
import type { OpenAIMessage } from "./request.ts";

/** The same count the gateway holds a chat prompt to its context length by. */
export const estimateInputTokens = (messages: OpenAIMessage[]): number => messagesTokens(messages);
