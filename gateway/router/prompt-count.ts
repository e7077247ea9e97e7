// Whether a prompt is long enough to be worth the engine's exact count before the context check:
// a quarter of the context length by the estimate, where a tokenizer that makes a token of every
// character or two (code, most scripts but Latin) could already be over. Shorter prompts keep the
// estimate and pay nothing. A chat is counted through the template (tools included); a completions
// prompt when it is one string.
import type { Endpoint, VersionLimits } from "./endpoint.ts";
import { approxTokens, askedTokens, messagesTokens, type PromptCount } from "./request-limits.ts";
import type { CountInput, TokenCounter } from "./token-count.ts";

export async function countPrompt(counter: TokenCounter, path: string, body: Record<string, unknown>, limits: VersionLimits | null, endpoints: readonly Endpoint[]): Promise<PromptCount | undefined> {
  if (!limits || endpoints.length === 0) return undefined;
  let input: CountInput;
  let estimate: number;
  if (path === "/v1/chat/completions" && Array.isArray(body.messages)) {
    input = body.tools === undefined ? { messages: body.messages } : { messages: body.messages, tools: body.tools };
    estimate = messagesTokens(body.messages);
  } else if (path === "/v1/completions" && typeof body.prompt === "string") {
    input = { prompt: body.prompt };
    estimate = approxTokens(body.prompt);
  } else return undefined;
  if ((estimate + askedTokens(body)) * 4 <= limits.contextLength) return undefined;
  return counter.count(endpoints, input, estimate);
}
