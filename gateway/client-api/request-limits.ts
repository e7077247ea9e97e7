// A request held to the served model's limits before it reaches an engine, so a client gets a 400
// that names its field rather than an engine's error or a silently shortened answer. OpenAI and
// Anthropic both refuse (400) a max_tokens above the model's longest answer; so does this gateway.
import type { VersionLimits } from "../router/registry.ts";
import { ApiError } from "./errors.ts";

const OUTPUT_FIELDS = ["max_tokens", "max_completion_tokens"] as const;

/** Tokens of a text as the engines' simulator and count_tokens estimate them: 4 characters each. */
export const approxTokens = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

export function checkRequestLimits(path: string, body: Record<string, unknown>, limits: VersionLimits | null, model: string): void {
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
