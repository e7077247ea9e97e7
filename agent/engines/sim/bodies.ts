// The OpenAI bodies of an answer, written by hand for speed: a whole chat or completions response,
// or its SSE chunks (interleaved by token across choices, reasoning first) and their end.
import { chatLogprobs, chatTokenLogprob, completionLogprobs } from "./logprobs.ts";
import { VOCAB, generate, mixSeed, offsetOf, reasoningPieces, structuredChoice, toolChoice, type Choice } from "./generation.ts";
import type { GenRequest } from "./request.ts";

/** Every choice of a request (n per prompt), generated in full when its job starts. */
export function computeChoices(g: GenRequest): Choice[] {
  const out: Choice[] = [];
  for (let p = 0; p < g.promptTokens.length; p++) {
    const h = p === 0 ? g.promptHash : mixSeed(g.promptHash, p, 0x5eed);
    for (let i = 0; i < g.n; i++) {
      const c =
        g.tool !== null
          ? toolChoice({ id: `call_${(h ^ i).toString(16)}`, name: g.tool.name }, g.tool.args)
          : g.structured !== null
            ? structuredChoice(g.structured, g.limit)
            : generate(h, g.seed, i, g.limit, g.stops);
      if (g.reasoning) c.reasoning = reasoningPieces(h, g.seed, i);
      out.push(c);
    }
  }
  return out;
}

/** Tokens of the longest choice: how many steps its stream takes. */
export function maxPiecesOf(choices: readonly Choice[]): number {
  let m = 0;
  for (const c of choices) if (c.pieces.length + c.reasoning.length > m) m = c.pieces.length + c.reasoning.length;
  return m;
}

/** The usage object; the prompt is counted once per prompt, not once per choice. */
export function usageJson(g: GenRequest, choices: readonly Choice[], steps = Infinity): string {
  // The prompt is read once per prompt, not once per choice.
  let pt = 0;
  for (const t of g.promptTokens) pt += t;
  let ct = 0;
  for (const c of choices) ct += Math.min(steps, c.pieces.length + c.reasoning.length);
  return `{"prompt_tokens":${pt},"total_tokens":${pt + ct},"completion_tokens":${ct},"prompt_tokens_details":null}`;
}

/** Bodies stamped with one `created` time, the engine's start. */
export class AnswerBodies {
  constructor(private readonly created: number) {}

  /** A whole (non-streamed) response. */
  full(g: GenRequest, id: string, choices: readonly Choice[]): string {
    let cs = "";
    for (let i = 0; i < choices.length; i++) {
      const c = choices[i] as Choice;
      const sr = c.stopReason === null ? "null" : JSON.stringify(c.stopReason);
      if (i > 0) cs += ",";
      if (g.kind === "chat") {
        const content = c.tool === null ? JSON.stringify(c.text) : "null";
        const reasoning = c.reasoning.length > 0 ? JSON.stringify(c.reasoning.join("")) : "null";
        const calls =
          c.tool === null ? "" : JSON.stringify({ id: c.tool.id, type: "function", function: { name: c.tool.name, arguments: c.text } });
        cs +=
          `{"index":${i},"message":{"role":"assistant","content":${content},"reasoning_content":${reasoning},"refusal":null,"tool_calls":[${calls}]},` +
          `"logprobs":${g.logprobs < 0 || c.tool !== null ? "null" : chatLogprobs(c.pieces, 0, g.logprobs, VOCAB)},"finish_reason":"${c.finish}","stop_reason":${sr}}`;
      } else {
        const echoed = g.echo !== null ? (g.echo[Math.floor(i / g.n)] ?? "") : "";
        const lp = g.logprobs < 0 ? "null" : completionLogprobs(c.pieces, 0, echoed.length, g.logprobs, VOCAB);
        cs += `{"index":${i},"text":${JSON.stringify(echoed + c.text)},"logprobs":${lp},"finish_reason":"${c.finish}","stop_reason":${sr}}`;
      }
    }
    const object = g.kind === "chat" ? "chat.completion" : "text_completion";
    return (
      `{"id":"${id}","object":"${object}","created":${this.created},"model":${g.model},"choices":[${cs}],` +
      `"usage":${usageJson(g, choices)},"system_fingerprint":null}`
    );
  }

  /** SSE events for tokens [from, to) of every choice, interleaved by step. */
  chunks(g: GenRequest, id: string, choices: readonly Choice[], from: number, to: number): string {
    const head =
      g.kind === "chat"
        ? `data: {"id":"${id}","object":"chat.completion.chunk","created":${this.created},"model":${g.model},"choices":[`
        : `data: {"id":"${id}","object":"text_completion","created":${this.created},"model":${g.model},"choices":[`;
    let tail = g.includeUsage ? `],"usage":null}\n\n` : `]}\n\n`;
    let out = "";
    for (let step = from; step < to; step++) {
      // Continuous usage: each chunk carries the tokens made up to its step, as vLLM's do.
      if (g.continuousUsage) tail = `],"usage":${usageJson(g, choices, step + 1)}}\n\n`;
      for (let i = 0; i < choices.length; i++) {
        const c = choices[i] as Choice;
        // A choice cut to nothing by a stop string still gets one (empty) chunk with its finish.
        const r = c.reasoning.length;
        const len = r + (c.pieces.length > 0 ? c.pieces.length : 1);
        if (step >= len) continue;
        const last = step === len - 1;
        const k = step - r; // the answer's token index; negative while reasoning
        let piece = c.pieces.length === 0 || k < 0 ? "" : (c.pieces[k] as string);
        if (step === 0 && g.echo !== null) piece = (g.echo[Math.floor(i / g.n)] ?? "") + piece;
        const fin = last ? `"${c.finish}"` : "null";
        const sr = last && c.stopReason !== null ? JSON.stringify(c.stopReason) : "null";
        if (g.kind === "chat") {
          if (step === 0)
            out += `${head}{"index":${i},"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}${tail}`;
          const delta =
            k < 0
              ? `{"reasoning_content":${JSON.stringify(c.reasoning[step] as string)}}`
              : c.tool === null
                ? `{"content":${JSON.stringify(piece)}}`
                : k === 0
                  ? `{"tool_calls":[{"index":0,"id":"${c.tool.id}","type":"function","function":{"name":${JSON.stringify(c.tool.name)},"arguments":${JSON.stringify(piece)}}}]}`
                  : `{"tool_calls":[{"index":0,"function":{"arguments":${JSON.stringify(piece)}}}]}`;
          const lp = g.logprobs < 0 || k < 0 || c.tool !== null || c.pieces.length === 0 ? "null" : `{"content":[${chatTokenLogprob(piece, k, g.logprobs, VOCAB)}]}`;
          out += `${head}{"index":${i},"delta":${delta},"logprobs":${lp},"finish_reason":${fin},"stop_reason":${sr}}${tail}`;
        } else {
          const lp = g.logprobs < 0 || c.pieces.length === 0 ? "null" : completionLogprobs([c.pieces[k] as string], k, (g.echo?.[Math.floor(i / g.n)]?.length ?? 0) + offsetOf(c.pieces, k), g.logprobs, VOCAB);
          out += `${head}{"index":${i},"text":${JSON.stringify(piece)},"logprobs":${lp},"finish_reason":${fin},"stop_reason":${sr}}${tail}`;
        }
      }
    }
    return out;
  }

  /** What ends a stream: the usage chunk when asked for, then [DONE]. */
  streamEnd(g: GenRequest, id: string, choices: readonly Choice[]): string {
    let out = "";
    if (g.includeUsage) {
      const object = g.kind === "chat" ? "chat.completion.chunk" : "text_completion";
      out += `data: {"id":"${id}","object":"${object}","created":${this.created},"model":${g.model},"choices":[],"usage":${usageJson(g, choices)}}\n\n`;
    }
    return out + "data: [DONE]\n\n";
  }
}
