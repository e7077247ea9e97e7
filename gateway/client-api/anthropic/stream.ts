// The engine's OpenAI chat stream turned into Anthropic's event stream, chunk by chunk as it
// arrives: message_start; per content block content_block_start, its deltas, content_block_stop
// (one ping after the first block opens); then message_delta (stop reason, usage) and message_stop.
import { messageId, stopReason, type MessageContext } from "./response.ts";
import { signThinking } from "./signature.ts";
import { SseData } from "../sse-data.ts";

interface ChunkDelta {
  content?: string | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
  tool_calls?: { index: number; id?: string; function?: { name?: string; arguments?: string } }[] | null;
}

export interface OpenAIChatChunk {
  choices?: { delta?: ChunkDelta; finish_reason?: string | null; stop_reason?: string | number | null }[];
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  /** The guardrail rule that ended the stream (gateway/guard/output-stream.ts). */
  guardrail?: object;
}

export function sseEvent(type: string, data: object): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

export class AnthropicStream {
  readonly id = messageId();
  usage: { prompt_tokens: number; completion_tokens: number } | null = null;
  private index = -1;
  private open: { type: "text" | "thinking" | "tool_use"; toolIndex?: number; thinking?: string } | null = null;
  private pinged = false;
  private finish: string | null = null;
  private matched: unknown = null;
  private guardrail: object | null = null;
  private readonly sse = new SseData();
  private done = false;

  constructor(private readonly ctx: MessageContext) {}

  /** message_start. The engine reports input tokens only at the end: they come in message_delta. */
  start(): string {
    const message = { id: this.id, type: "message", role: "assistant", model: this.ctx.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } };
    return sseEvent("message_start", { message });
  }

  /** Raw SSE text from the engine; returns the Anthropic events it completes. */
  push(text: string): string {
    let out = "";
    for (const data of this.sse.push(text)) out += data === "[DONE]" ? this.end() : this.chunk(JSON.parse(data) as OpenAIChatChunk);
    return out;
  }

  chunk(c: OpenAIChatChunk): string {
    if (c.usage) this.usage = c.usage;
    if (c.guardrail) this.guardrail = c.guardrail;
    let out = "";
    for (const choice of c.choices ?? []) {
      const d = choice.delta ?? {};
      const reasoning = d.reasoning_content ?? d.reasoning;
      if (reasoning && this.ctx.thinking) {
        if (this.open?.type !== "thinking") out += this.openBlock({ type: "thinking" }, { type: "thinking", thinking: "", signature: "" });
        this.open!.thinking += reasoning;
        out += this.delta({ type: "thinking_delta", thinking: reasoning });
      }
      if (d.content) {
        if (this.open?.type !== "text") out += this.openBlock({ type: "text" }, { type: "text", text: "" });
        out += this.delta({ type: "text_delta", text: d.content });
      }
      for (const t of d.tool_calls ?? []) {
        if (this.open?.type !== "tool_use" || this.open.toolIndex !== t.index) {
          out += this.openBlock({ type: "tool_use", toolIndex: t.index }, { type: "tool_use", id: t.id ?? `toolu_${this.id.slice(4)}_${t.index}`, name: t.function?.name ?? "", input: {} });
        }
        if (t.function?.arguments) out += this.delta({ type: "input_json_delta", partial_json: t.function.arguments });
      }
      if (choice.finish_reason) {
        this.finish = choice.finish_reason;
        this.matched = choice.stop_reason;
      }
    }
    return out;
  }

  /** The closing events; empty when already sent. */
  end(): string {
    if (this.done) return "";
    this.done = true;
    const out = this.closeBlock();
    const usage = { input_tokens: this.usage?.prompt_tokens ?? 0, output_tokens: this.usage?.completion_tokens ?? 0 };
    return out + sseEvent("message_delta", { delta: stopReason(this.finish, this.matched, this.ctx.stopSequences), usage, ...(this.guardrail && { guardrail: this.guardrail }) }) + sseEvent("message_stop", {});
  }

  private openBlock(open: NonNullable<AnthropicStream["open"]>, block: object): string {
    let out = this.closeBlock();
    this.index++;
    this.open = open.type === "thinking" ? { ...open, thinking: "" } : open;
    out += sseEvent("content_block_start", { index: this.index, content_block: block });
    if (!this.pinged) {
      this.pinged = true;
      out += sseEvent("ping", {});
    }
    return out;
  }

  private closeBlock(): string {
    if (!this.open) return "";
    let out = "";
    // Anthropic sends a thinking block's signature as its last delta.
    if (this.open.type === "thinking") out += this.delta({ type: "signature_delta", signature: signThinking(this.open.thinking ?? "") });
    this.open = null;
    return out + sseEvent("content_block_stop", { index: this.index });
  }

  private delta(delta: object): string {
    return sseEvent("content_block_delta", { index: this.index, delta });
  }
}
