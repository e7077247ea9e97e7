// /v1/messages/count_tokens without asking an engine: the prompt as the engine would get it,
// counted the way the sim counts prompt tokens (a token per 4 characters of message text, at
// least 1), so for a sim model it equals the input_tokens a /v1/messages call reports. Real
// tokenizers differ; this is an estimate for budgeting, not a bill.
import type { OpenAIMessage } from "./request.ts";

export function estimateInputTokens(messages: OpenAIMessage[]): number {
  let chars = 0;
  for (const m of messages) {
    if (typeof m.content === "string") chars += m.content.length;
    else if (Array.isArray(m.content)) for (const part of m.content) if (part.type === "text") chars += part.text.length;
  }
  return Math.max(1, Math.ceil(chars / 4));
}
