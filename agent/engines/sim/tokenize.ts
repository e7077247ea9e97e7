// The sim's tokenizer, on vLLM's POST /tokenize: a prompt ({prompt, add_special_tokens}) or a chat
// ({messages, add_generation_prompt, …}) answered with {count, max_model_len, tokens, token_strs}.
// It counts as the sim's generation counts prompt_tokens (request.ts: a token per 4 characters of
// text, at least 1), so a count asked before a request equals the usage that request reports.
import { FNV0, fnv } from "./generation.ts";
import { BadRequest, contentText } from "./request.ts";

const VOCAB_SIZE = 32_000;

/** The text's tokens: one id per 4 characters, fixed by those characters. */
function tokensOf(text: string): number[] {
  const n = Math.max(1, Math.ceil(text.length / 4));
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = fnv(text.slice(i * 4, i * 4 + 4), FNV0) % VOCAB_SIZE;
  return out;
}

export function tokenize(body: Record<string, unknown>, maxModelLen: number): string {
  let text: string;
  if (body.messages !== undefined) {
    if (!Array.isArray(body.messages) || body.messages.length === 0) throw new BadRequest("messages must be a non-empty array", "messages");
    text = "";
    body.messages.forEach((m: unknown, i) => {
      if (m === null || typeof m !== "object" || Array.isArray(m)) throw new BadRequest(`messages[${i}] must be an object`, `messages[${i}]`);
      if (typeof (m as { role?: unknown }).role !== "string") throw new BadRequest(`messages[${i}].role must be a string`, `messages[${i}].role`);
      text += contentText((m as { content?: unknown }).content, i);
    });
  } else if (typeof body.prompt === "string") text = body.prompt;
  else throw new BadRequest("prompt must be a string, or messages an array", "prompt");
  const tokens = tokensOf(text);
  const strs = body.return_token_strs === true ? tokens.map((_, i) => text.slice(i * 4, i * 4 + 4)) : null;
  return JSON.stringify({ count: tokens.length, max_model_len: maxModelLen, tokens, token_strs: strs });
}
