// Log probabilities for the sim's tokens, in OpenAI's shapes (chat: content[] entries with
// top_logprobs; completions: tokens/token_logprobs/top_logprobs/text_offset). Deterministic: a
// token's figure depends on the token and its place only, and the sampled token is always the
// likeliest, so top_logprobs[0] is the token itself.

/** Thousandths, so the JSON shows short decimals (-0.412), not binary fractions. */
function figures(token: string, index: number, top: number, vocab: readonly string[]): { tokens: string[]; logprobs: number[] } {
  let h = 0x811c9dc5 ^ Math.imul(index + 1, 0x9e3779b1);
  for (let i = 0; i < token.length; i++) h = Math.imul(h ^ token.charCodeAt(i), 0x01000193);
  h >>>= 0;
  const first = -((h % 1000) + 1);
  const tokens = [token];
  const logprobs = [first / 1000];
  for (let j = 1, k = h % vocab.length; tokens.length < top && j <= vocab.length; j++) {
    const alt = vocab[(k + j * 7) % vocab.length]!;
    if (tokens.includes(alt)) continue;
    tokens.push(alt);
    logprobs.push((first - tokens.length * 750 - ((h >>> 8) % 97)) / 1000);
  }
  return { tokens, logprobs };
}

const bytes = (t: string) => JSON.stringify([...Buffer.from(t, "utf8")]);

/** One chat `logprobs.content[]` entry, as JSON. */
export function chatTokenLogprob(token: string, index: number, top: number, vocab: readonly string[]): string {
  const f = figures(token, index, Math.max(1, top), vocab);
  let alts = "";
  for (let i = 0; i < top && i < f.tokens.length; i++) {
    if (i > 0) alts += ",";
    alts += `{"token":${JSON.stringify(f.tokens[i])},"logprob":${f.logprobs[i]},"bytes":${bytes(f.tokens[i]!)}}`;
  }
  return `{"token":${JSON.stringify(token)},"logprob":${f.logprobs[0]},"bytes":${bytes(token)},"top_logprobs":[${alts}]}`;
}

/** A chat choice's `logprobs` for tokens `pieces` starting at token `from`. */
export function chatLogprobs(pieces: readonly string[], from: number, top: number, vocab: readonly string[]): string {
  let content = "";
  for (let i = 0; i < pieces.length; i++) content += (i > 0 ? "," : "") + chatTokenLogprob(pieces[i]!, from + i, top, vocab);
  return `{"content":[${content}],"refusal":null}`;
}

/** A completion choice's `logprobs`: the sampled token and up to `top` alternatives per place. */
export function completionLogprobs(pieces: readonly string[], from: number, offset: number, top: number, vocab: readonly string[]): string {
  const tokens: string[] = [];
  const lps: number[] = [];
  const tops: Record<string, number>[] = [];
  const offsets: number[] = [];
  for (let i = 0; i < pieces.length; i++) {
    const f = figures(pieces[i]!, from + i, Math.max(1, top), vocab);
    tokens.push(pieces[i]!);
    lps.push(f.logprobs[0]!);
    tops.push(Object.fromEntries(f.tokens.map((t, k) => [t, f.logprobs[k]!])));
    offsets.push(offset);
    offset += pieces[i]!.length;
  }
  return JSON.stringify({ tokens, token_logprobs: lps, top_logprobs: tops, text_offset: offsets });
}
