// The sim's embeddings: deterministic unit vectors of up to 64 dimensions, fixed by each input's
// text (or token ids), as floats or base64, with OpenAI's usage. In `hash` mode (the default) any
// change to a text gives an unrelated vector; in `words` mode (--embeddings words) a text is the sum
// of its words' vectors, lower-cased, without punctuation, a trailing s or the commonest words,
// so rewordings of one question ("What's the capital of France?", "capital of france, please")
// land close and another question does not: what the similar answer cache's tests need.
import { FNV0, fnv, prng } from "./generation.ts";
import { BadRequest, asInt } from "./request.ts";

const EMBED_DIM = 64;

export interface EmbeddingDefaults {
  servedJson: string; // the served model's name, JSON-encoded
  created: number;
  mode?: "hash" | "words";
  nextId(): string;
}

function embed(text: string, dims: number): Float32Array {
  const rnd = prng(fnv(text, FNV0));
  const v = new Float64Array(EMBED_DIM);
  let norm = 0;
  for (let i = 0; i < dims; i++) {
    const x = rnd() / 2147483648 - 1;
    v[i] = x;
    norm += x * x;
  }
  norm = Math.sqrt(norm) || 1;
  const out = new Float32Array(dims);
  for (let i = 0; i < dims; i++) out[i] = (v[i] as number) / norm;
  return out;
}

/** Words that say little of what a question is about: left out in `words` mode. */
const STOP = new Set(
  "a an the of to in on at for by with and or is are was be it its it's what what's whats which who how why when where me my i you your please tell say can could would will do does tell quick question wonder know let us we our this that there here just about so some any hello hi thank thanks".split(" "),
);

function embedWords(text: string, dims: number): Float32Array {
  const sum = new Float64Array(dims);
  for (const raw of text.toLowerCase().split(/[^a-z0-9']+/)) {
    const w = raw.replace(/'s$/, "").replace(/'/g, "").replace(/(?<=..)s$/, "");
    if (!w || STOP.has(w) || STOP.has(raw)) continue;
    const word = embed(w, dims);
    for (let i = 0; i < dims; i++) sum[i] = (sum[i] as number) + (word[i] as number);
  }
  let norm = 0;
  for (let i = 0; i < dims; i++) norm += (sum[i] as number) ** 2;
  if (norm === 0) return embed(text, dims);
  norm = Math.sqrt(norm);
  const out = new Float32Array(dims);
  for (let i = 0; i < dims; i++) out[i] = (sum[i] as number) / norm;
  return out;
}

/**
 * An embeddings response: one unit vector per input, fixed by its text (or tokens), with the
 * figures metrics count. The id is taken only once the request is known good.
 */
export function embeddings(body: Record<string, unknown>, d: EmbeddingDefaults): { body: string; tokens: number; items: number } {
  const inp = body.input;
  const items: string[] = [];
  let tokens = 0;
  const bad = (): never => {
    throw new BadRequest("input must be a string, an array of strings, or token arrays", "input");
  };
  if (typeof inp === "string") items.push(inp);
  else if (Array.isArray(inp) && inp.length > 0) {
    if (typeof inp[0] === "number") {
      if (!inp.every((t) => Number.isInteger(t))) bad();
      items.push("\u0000tokens:" + inp.join(","));
      tokens += inp.length;
    } else
      for (const x of inp) {
        if (typeof x === "string") items.push(x);
        else if (Array.isArray(x) && x.length > 0 && x.every((t) => Number.isInteger(t))) {
          items.push("\u0000tokens:" + x.join(","));
          tokens += x.length;
        } else bad();
      }
  } else bad();
  for (const t of items) if (!t.startsWith("\u0000tokens:")) tokens += Math.max(1, Math.ceil(t.length / 4));
  const dims = asInt(body.dimensions, "dimensions", 1, EMBED_DIM) ?? EMBED_DIM;
  const enc = body.encoding_format;
  if (enc !== undefined && enc !== null && enc !== "float" && enc !== "base64")
    throw new BadRequest('encoding_format must be "float" or "base64"', "encoding_format");
  if (body.model !== undefined && body.model !== null && typeof body.model !== "string")
    throw new BadRequest("model must be a string", "model");
  const model = typeof body.model === "string" && body.model !== "" ? JSON.stringify(body.model) : d.servedJson;
  let data = "";
  for (let i = 0; i < items.length; i++) {
    const text = items[i] as string;
    const vec = d.mode === "words" && !text.startsWith("\u0000tokens:") ? embedWords(text, dims) : embed(text, dims);
    const e =
      enc === "base64"
        ? `"${Buffer.from(vec.buffer, vec.byteOffset, vec.byteLength).toString("base64")}"`
        : `[${Array.from(vec).join(",")}]`;
    if (i > 0) data += ",";
    data += `{"object":"embedding","index":${i},"embedding":${e}}`;
  }
  const id = d.nextId();
  return {
    body:
      `{"id":"${id}","object":"list","created":${d.created},"model":${model},"data":[${data}],` +
      `"usage":{"prompt_tokens":${tokens},"total_tokens":${tokens},"completion_tokens":0,"prompt_tokens_details":null}}`,
    tokens,
    items: items.length,
  };
}
