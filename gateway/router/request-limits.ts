// A request held to the served model's limits before it reaches an engine, so a client gets a 400
// that names its field rather than an engine's error or a silently shortened answer. OpenAI and
// Anthropic both refuse (400) a max_tokens above the model's longest answer; so does this gateway.
// A prompt and the answer it asks for are held to the context length by an estimate (4 characters a
// token), or, for a long prompt, by the engine's own count (prompt-count.ts). The estimate counts only
// the text, not the chat template, tools or pictures, which all add tokens.
import type { VersionLimits } from "./endpoint.ts";
import { ApiError } from "../errors.ts";

const OUTPUT_FIELDS = ["max_tokens", "max_completion_tokens"] as const;

/** Tokens of so many characters as the engines' simulator and count_tokens estimate them: 4 each. */
const tokensOfChars = (chars: number): number => Math.max(1, Math.ceil(chars / 4));
export const approxTokens = (text: string): number => tokensOfChars(text.length);

/** A prompt's count from the engine's tokenizer (token-count.ts), when one was asked for. */
export interface PromptCount {
  tokens: number;
  exact: boolean;
}

/**
 * `route` is the client's route when it differs from the engine's `path` (/v1/messages); `counted`
 * replaces the estimate of a chat or single completions prompt when the engine counted it.
 */
export function checkRequestLimits(path: string, body: Record<string, unknown>, limits: VersionLimits | null, model: string, route = path, counted?: PromptCount): void {
  if (!limits) return;
  for (const field of OUTPUT_FIELDS) {
    const asked = body[field];
    if (typeof asked === "number" && asked > limits.maxOutput) {
      throw new ApiError(
        "invalid_request",
        `${field} is too large: ${asked}. Model '${model}' answers with at most ${limits.maxOutput} tokens, whereas you asked for ${asked}.`,
        { param: field, code: "invalid_value" },
      );
    }
  }
  if (path === "/v1/embeddings") checkEmbeddingInputs(body.input, limits.contextLength, model);
  else if (path === "/v1/chat/completions" && Array.isArray(body.messages)) checkContext(counted ?? estimated(messagesTokens(body.messages)), "messages", body, limits.contextLength, route);
  else if (path === "/v1/completions") checkContext(counted ?? estimated(longestPrompt(body.prompt)), "prompt", body, limits.contextLength, route);
}

const estimated = (tokens: number): PromptCount => ({ tokens, exact: false });

/** The answer asked for: max_completion_tokens, else max_tokens, else 0. */
export function askedTokens(body: Record<string, unknown>): number {
  const field = typeof body.max_completion_tokens === "number" ? "max_completion_tokens" : "max_tokens";
  return typeof body[field] === "number" ? (body[field] as number) : 0;
}

/** Tokens of a chat prompt's text (string contents and text parts), as the sim and count_tokens count them. */
export function messagesTokens(messages: readonly unknown[]): number {
  let chars = 0;
  for (const m of messages) {
    const content = (m as { content?: unknown } | null)?.content;
    if (typeof content === "string") chars += content.length;
    else if (Array.isArray(content)) {
      for (const part of content as { type?: unknown; text?: unknown }[]) if (part?.type === "text" && typeof part.text === "string") chars += part.text.length;
    }
  }
  return tokensOfChars(chars);
}

/** A completions prompt is one sequence per string or token array: the longest must fit. */
function longestPrompt(prompt: unknown): number {
  const items = typeof prompt === "string" || (Array.isArray(prompt) && typeof prompt[0] === "number") ? [prompt] : Array.isArray(prompt) ? prompt : [];
  let most = 0;
  for (const p of items) most = Math.max(most, typeof p === "string" ? approxTokens(p) : Array.isArray(p) ? p.length : 0);
  return most;
}

/** The prompt and the answer asked for (max_completion_tokens, else max_tokens) must fit the context. */
function checkContext(count: PromptCount, param: "messages" | "prompt", body: Record<string, unknown>, contextLength: number, route: string): void {
  const asked = askedTokens(body);
  const prompt = count.tokens;
  if (prompt + asked <= contextLength) return;
  const about = count.exact ? "" : "about ";
  // Each API's own words: clients match on them ("maximum context length", "exceed context limit").
  const message =
    route !== "/v1/messages"
      ? `This model's maximum context length is ${contextLength} tokens. However, you requested ${about}${prompt + asked} tokens (${about}${prompt} in the ${param}, ${asked} in the completion). Please reduce the length of the ${param} or completion.`
      : prompt > contextLength
        ? `prompt is too long: ${about}${prompt} tokens > ${contextLength} maximum`
        : `input length and \`max_tokens\` exceed context limit: ${about}${prompt} + ${asked} > ${contextLength}, decrease input length or \`max_tokens\` and try again`;
  throw new ApiError("invalid_request", message, { param, code: "context_length_exceeded" });
}

/** Each text of a batch on its own: the one that does not fit is named by its index. */
function checkEmbeddingInputs(input: unknown, contextLength: number, model: string): void {
  const one = typeof input === "string" || (Array.isArray(input) && typeof input[0] === "number");
  const items = one ? [input] : Array.isArray(input) ? input : [];
  items.forEach((item, i) => {
    const tokens = typeof item === "string" ? approxTokens(item) : Array.isArray(item) ? item.length : 0;
    if (tokens <= contextLength) return;
    const param = one ? "input" : `input.${i}`;
    throw new ApiError("invalid_request", `${param} is about ${tokens} tokens; model '${model}' takes at most ${contextLength} per input.`, {
      param,
      code: "context_length_exceeded",
    });
  });
}
