// The sim's answers, deterministic for a prompt and seed: words from a fixed vocabulary drawn by a
// small PRNG, cut by a token limit or a stop string; reasoning before them; a tool call's or a
// structured answer's JSON cut in pieces, one per token.

export const VOCAB = (
  "the of and to in is that it was for on are as with his they at be this from have or by one had " +
  "not but what all were when we there can an your which their said if do will each about how up out " +
  "them then she many some so these would other into has more her two like him see time could no make " +
  "than first been its who now people my made over did down only way find use may water long little " +
  "very after words called just where most know get through back much go good new write our me man too " +
  "any day same right look think also around another came come work three word must because does part " +
  "even place well such here take why things help put years different away again off went old number " +
  "great tell men say small every found still between name should home big give air line set own under " +
  "read last never us left end along while might next sound below saw something thought both few those " +
  "always looked show large often together asked house world going want school important until form food " +
  "keep children feet land side without boy once animals life enough took sometimes four head above kind " +
  "began almost live page got earth need far hand high year mother light parts country father let night " +
  "following picture being study second eyes soon times story boys since white days ever paper hard near " +
  "sentence better best across during today others however sure means knew try told young miles sun ways " +
  "thing whole hear example heard several change answer room sea against top turned learn point city play " +
  "toward five using himself usually money seen car morning given family yes today simulated answer"
)
  .split(" ")
  .map((w) => " " + w);
export const VOCAB_N = VOCAB.length;
// Sentence ends make the text look less like a word list; they are tokens of their own.
const PERIOD = ".";

/** FNV-1a over UTF-16 code units, continuing from `h`. */
export function fnv(s: string, h: number): number {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
export const FNV0 = 0x811c9dc5;

/** mulberry32: small, fast, good enough. Returns a function giving uint32s. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

export function mixSeed(promptHash: number, seed: number, choice: number): number {
  let h = promptHash ^ Math.imul(seed | 0, 0x9e3779b1) ^ Math.imul((seed / 4294967296) | 0, 0x85ebca77);
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h ^= Math.imul(choice + 1, 0x27d4eb2f);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

export interface Choice {
  pieces: string[]; // token texts as emitted (the last may be cut short by a stop string); a tool call's argument pieces
  text: string;
  finish: "stop" | "length" | "tool_calls";
  stopReason: string | null; // the stop string matched, as vLLM reports it
  reasoning: string[]; // reasoning tokens, emitted before `pieces` (usually the shared empty array)
  tool: ToolCall | null; // set when the answer is a tool call: `pieces` are then its arguments
}

export interface ToolCall {
  id: string;
  name: string;
}

const NO_REASONING: string[] = [];

/**
 * One choice's answer. The natural length of an answer is 8..255 tokens, fixed by the PRNG; the
 * answer stops there ("stop"), or at `limit` ("length"), or just before the first stop string.
 */
export function generate(promptHash: number, seed: number, choice: number, limit: number, stops: string[] | null): Choice {
  const rnd = prng(mixSeed(promptHash, seed, choice));
  const natural = 8 + (rnd() & 0xf7);
  const count = natural < limit ? natural : limit;
  const pieces: string[] = new Array(count);
  let text = "";
  for (let i = 0; i < count; i++) {
    const r = rnd();
    const p = i > 2 && (r & 15) === 0 ? PERIOD : (VOCAB[r % VOCAB_N] as string);
    pieces[i] = p;
    text += p;
  }
  let finish: "stop" | "length" = natural < limit ? "stop" : "length";
  let stopReason: string | null = null;
  if (stops !== null) {
    let cut = -1;
    for (const s of stops) {
      const at = text.indexOf(s);
      if (at >= 0 && (cut < 0 || at < cut)) {
        cut = at;
        stopReason = s;
      }
    }
    if (cut >= 0) {
      finish = "stop";
      text = text.slice(0, cut);
      let len = 0;
      let k = 0;
      while (k < pieces.length && len + (pieces[k] as string).length <= cut) len += (pieces[k++] as string).length;
      if (len < cut) {
        pieces[k] = (pieces[k] as string).slice(0, cut - len);
        k++;
      }
      pieces.length = k;
    }
  }
  return { pieces, text, finish, stopReason, reasoning: NO_REASONING, tool: null };
}

/** Reasoning text for a prompt: 6..13 tokens, deterministic, and different from the answer. */
export function reasoningPieces(promptHash: number, seed: number, choice: number): string[] {
  const rnd = prng(mixSeed(promptHash ^ 0x7ea5, seed, choice));
  const count = 6 + (rnd() & 7);
  const out: string[] = new Array(count);
  for (let i = 0; i < count; i++) out[i] = VOCAB[rnd() % VOCAB_N] as string;
  return out;
}

/** JSON (a tool call's arguments, a structured answer) cut in pieces of 8 characters, one per token. */
export function jsonPieces(json: string): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < json.length; i += 8) pieces.push(json.slice(i, i + 8));
  return pieces;
}

export function toolChoice(tool: ToolCall, args: string): Choice {
  return { pieces: jsonPieces(args), text: args, finish: "tool_calls", stopReason: null, reasoning: NO_REASONING, tool };
}

/** Where token `k` starts in the answer's text. */
export function offsetOf(pieces: readonly string[], k: number): number {
  let n = 0;
  for (let i = 0; i < k; i++) n += (pieces[i] as string).length;
  return n;
}

/** A structured answer (response_format); cut at `limit` tokens like any answer, then no longer valid JSON. */
export function structuredChoice(json: string, limit: number): Choice {
  const pieces = jsonPieces(json);
  if (pieces.length <= limit) return { pieces, text: json, finish: "stop", stopReason: null, reasoning: NO_REASONING, tool: null };
  pieces.length = limit;
  return { pieces, text: pieces.join(""), finish: "length", stopReason: null, reasoning: NO_REASONING, tool: null };
}
