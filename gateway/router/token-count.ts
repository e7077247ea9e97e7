// Exact token counts from the serving engine's own tokenizer, through its chat template, where the
// engine has one: vLLM's (and the sim's) POST /tokenize with `messages` answers {count, tokens};
// llama-server's /tokenize takes text only ({content} → {tokens}, with no `count`), so for it the
// chat is first made text by its POST /apply-template. Which of the two a replica speaks is learnt
// from its first answer; one with neither (404, or an outside provider) is asked again after
// 5 minutes and meanwhile estimated. Counts are kept in a small LRU by the hash of the model's
// version and the text, so a repeated prompt costs no call. A failure or a slow engine (2 s) gives
// the estimate: a count never fails a request.
import { createHash } from "node:crypto";
import type { Endpoint } from "./endpoint.ts";

export type CountInput = { messages: readonly unknown[]; tools?: unknown } | { prompt: string };
export interface TokenCount {
  tokens: number;
  exact: boolean;
}

type Protocol = "vllm" | "llamacpp" | "none";
const CACHE_SIZE = 4096;
const RETRY_NONE_MS = 5 * 60_000;
const TIMEOUT_MS = 2_000;

class NotServed extends Error {}

export class TokenCounter {
  private readonly cache = new Map<string, number>();
  private readonly protocols = new WeakMap<Endpoint, { p: Protocol; at: number }>();
  private turn = 0;
  /** Counts asked of engines (cache misses): the tests read it. */
  engineCalls = 0;

  /** The engine's count when one of `endpoints` can give it, else `estimate`. */
  async count(endpoints: readonly Endpoint[], input: CountInput, estimate: number): Promise<TokenCount> {
    const now = Date.now();
    const usable = endpoints.filter((e) => e.outside === null && this.protocolOf(e, now) !== "none" && e.breaker.state !== "open");
    if (usable.length === 0) return { tokens: estimate, exact: false };
    const e = usable[this.turn++ % usable.length]!;
    const key = createHash("sha256").update(`${e.model}\0${e.version}\0`).update(JSON.stringify(input)).digest("base64");
    const hit = this.cache.get(key);
    if (hit !== undefined) {
      // Least recently used goes first: a hit moves to the end.
      this.cache.delete(key);
      this.cache.set(key, hit);
      return { tokens: hit, exact: true };
    }
    let tokens: number;
    try {
      this.engineCalls++;
      tokens = await this.ask(e, input);
    } catch (err) {
      if (err instanceof NotServed) this.protocols.set(e, { p: "none", at: now });
      return { tokens: estimate, exact: false };
    }
    this.cache.set(key, tokens);
    if (this.cache.size > CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    return { tokens, exact: true };
  }

  private protocolOf(e: Endpoint, now: number): Protocol | undefined {
    const known = this.protocols.get(e);
    if (known?.p === "none" && now - known.at > RETRY_NONE_MS) return undefined;
    return known?.p;
  }

  private async ask(e: Endpoint, input: CountInput): Promise<number> {
    const model = e.model;
    if (this.protocols.get(e)?.p !== "llamacpp") {
      const body = "prompt" in input ? { model, prompt: input.prompt } : { model, messages: input.messages, add_generation_prompt: true, ...(input.tools ? { tools: input.tools } : {}) };
      const r = await post(e, "/tokenize", body);
      if (typeof r.count === "number") {
        this.protocols.set(e, { p: "vllm", at: 0 });
        return r.count;
      }
      if (!Array.isArray(r.tokens)) throw new NotServed();
      this.protocols.set(e, { p: "llamacpp", at: 0 });
      if ("prompt" in input) return r.tokens.length;
    }
    // llama-server: the chat as its template writes it, tokenized as its chat route does (BOS added, specials parsed).
    const content = "prompt" in input ? input.prompt : (await post(e, "/apply-template", { messages: input.messages })).prompt;
    if (typeof content !== "string") throw new NotServed();
    const r = await post(e, "/tokenize", { content, add_special: true, parse_special: true });
    if (!Array.isArray(r.tokens)) throw new NotServed();
    return r.tokens.length;
  }
}

/** A JSON POST to the engine; NotServed for an answer that says the route is not there. */
async function post(e: Endpoint, path: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await e.pool.request({
    path,
    method: "POST",
    headers: { "content-type": "application/json", authorization: e.engineAuth },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const text = await r.body.text();
  // No such route; a 400 or 422 is this input refused (pictures a text-only engine cannot read), not the route missing.
  if (r.statusCode === 404 || r.statusCode === 405 || r.statusCode === 501) throw new NotServed();
  if (r.statusCode !== 200) throw new Error(`the engine answered ${r.statusCode}`);
  const parsed = JSON.parse(text) as unknown;
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new NotServed();
  return parsed as Record<string, unknown>;
}
