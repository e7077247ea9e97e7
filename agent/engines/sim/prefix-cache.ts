// The sim's model of an engine's prefix cache (vLLM's automatic prefix caching): a prompt whose
// beginning the engine computed recently finds its KV blocks cached, so its first token comes
// sooner. The beginning is the first PREFIX_CACHE_CHARS characters of the prompt's text; entries
// are forgotten after PREFIX_CACHE_TTL_MS, or oldest first beyond PREFIX_CACHE_ENTRIES (eviction).
// Counted as vLLM does, in prompt tokens: queries (every prompt token looked up) and hits (tokens
// found cached).
import { promptStartHash } from "../../../common/prompt-start-hash.ts";

export const PREFIX_CACHE_CHARS = 256;
export const PREFIX_CACHE_TTL_MS = 10 * 60_000;
export const PREFIX_CACHE_ENTRIES = 10_000;

export class PrefixCache {
  /** hash → when last computed (ms); a Map iterates in insertion order, so the first is the oldest. */
  private seen = new Map<number, number>();
  queriedTokens = 0;
  hitTokens = 0;

  /** Looks a prompt up (and caches it): true when its beginning was computed recently. */
  lookup(prefix: PromptPrefix, now: number): boolean {
    this.queriedTokens += prefix.promptTokens;
    if (prefix.hash === 0) return false;
    const at = this.seen.get(prefix.hash);
    const hit = at !== undefined && now - at <= PREFIX_CACHE_TTL_MS;
    if (hit) this.hitTokens += prefix.tokens;
    this.seen.delete(prefix.hash);
    this.seen.set(prefix.hash, now);
    if (this.seen.size > PREFIX_CACHE_ENTRIES) this.seen.delete(this.seen.keys().next().value as number);
    return hit;
  }
}

export interface PromptPrefix {
  /** FNV-1a of the prompt's first PREFIX_CACHE_CHARS characters; 0 for a prompt shorter than that (nothing worth a block). */
  hash: number;
  /** Tokens in the prefix (4 characters a token, as the sim counts). */
  tokens: number;
  promptTokens: number;
}

/** The prefix of a chat request's messages (string or text-part contents, in order) or of a completion's first prompt. */
export function promptPrefix(body: Record<string, unknown>, promptTokens: number): PromptPrefix {
  const hash = promptStartHash(body, PREFIX_CACHE_CHARS, true);
  return { hash, tokens: hash === 0 ? 0 : Math.ceil(PREFIX_CACHE_CHARS / 4), promptTokens };
}
