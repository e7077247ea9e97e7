// /v1/messages/count_tokens: the prompt as the engine would get it (system, turns, tools), counted
// by the engine's own tokenizer through its chat template when a replica of the model has one
// (gateway/router/token-count.ts), else estimated as the sim counts prompt tokens (a token per 4
// characters of message text, at least 1). `x-llmgw-token-count: exact|estimate` says which.
import type { Response } from "express";
import { modelAllowed } from "../../auth/key-cache.ts";
import { ApiError } from "../../errors.ts";
import { messagesTokens } from "../../router/request-limits.ts";
import type { Authed, ClientApiDeps } from "../context.ts";
import { toOpenAIPrompt, type OpenAIMessage } from "./request.ts";
import type { CountTokensRequest } from "./schemas.ts";

/** The estimate: the same count the gateway holds a short chat prompt to its context length by. */
export const estimateInputTokens = (messages: OpenAIMessage[]): number => messagesTokens(messages);

export async function countTokens(deps: ClientApiDeps, req: Authed, res: Response, r: CountTokensRequest): Promise<void> {
  if (!modelAllowed(req.key!.models, r.model)) {
    throw new ApiError("permission", `this key may not use model '${r.model}'`, { param: "model", code: "model_not_allowed" });
  }
  const prompt = toOpenAIPrompt(r);
  const estimate = estimateInputTokens(prompt.messages);
  const endpoints = deps.registry?.endpoints(r.model) ?? [];
  const input = prompt.tools === undefined ? { messages: prompt.messages } : { messages: prompt.messages, tools: prompt.tools };
  const counted = deps.tokens ? await deps.tokens.count(endpoints, input, estimate) : { tokens: estimate, exact: false };
  res.setHeader("x-llmgw-token-count", counted.exact ? "exact" : "estimate");
  res.json({ input_tokens: counted.tokens });
}
