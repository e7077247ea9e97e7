// The engine's chat stream turned into the Responses API's typed events, as chunks arrive, in
// OpenAI's order: response.created, response.in_progress; per output item output_item.added, then
// for text (or reasoning) content_part.added, its deltas, its .done, content_part.done, and for a
// function call its function_call_arguments deltas and .done; output_item.done; then
// response.completed (or response.incomplete). Every event has a sequence_number.
import type { OpenAIChatChunk } from "../anthropic/stream.ts";
import { newId } from "./request.ts";
import { messageItem, responseObject, type ChatUsage, type OutputItem, type ResponseContext, type ResponseObject } from "./response.ts";
import { SseData } from "../sse-data.ts";

type Open = { kind: "message" | "reasoning"; text: string } | { kind: "call"; toolIndex: number; callId: string; name: string; args: string };

export class ResponsesStream {
  usage: ChatUsage | null = null;
  readonly output: OutputItem[] = [];
  private seq = 0;
  private open: (Open & { id: string }) | null = null;
  private finish: string | null = null;
  private readonly sse = new SseData();
  private ended = false;

  constructor(private readonly ctx: ResponseContext) {}

  private event(type: string, data: object): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, ...data, sequence_number: this.seq++ })}\n\n`;
  }

  start(): string {
    const response = responseObject(this.ctx, "in_progress", [], null);
    return this.event("response.created", { response }) + this.event("response.in_progress", { response });
  }

  /** Raw SSE text from the engine; returns the events it completes. */
  push(text: string): string {
    let out = "";
    for (const data of this.sse.push(text)) if (data !== "[DONE]") out += this.chunk(JSON.parse(data) as OpenAIChatChunk);
    return out;
  }

  private chunk(c: OpenAIChatChunk): string {
    if (c.usage) this.usage = c.usage;
    let out = "";
    for (const choice of c.choices ?? []) {
      const d = choice.delta ?? {};
      const reasoning = d.reasoning_content ?? d.reasoning;
      if (reasoning && this.ctx.thinking) out += this.text("reasoning", reasoning);
      if (d.content) out += this.text("message", d.content);
      for (const t of d.tool_calls ?? []) {
        if (this.open?.kind !== "call" || this.open.toolIndex !== t.index) {
          out += this.close();
          const call = { kind: "call" as const, id: newId("fc"), toolIndex: t.index, callId: t.id ?? newId("call"), name: t.function?.name ?? "", args: "" };
          this.open = call;
          out += this.event("response.output_item.added", { output_index: this.output.length, item: this.callItem("in_progress") });
        }
        const delta = t.function?.arguments;
        if (delta && this.open.kind === "call") {
          this.open.args += delta;
          out += this.event("response.function_call_arguments.delta", { item_id: this.open.id, output_index: this.output.length, delta });
        }
      }
      if (choice.finish_reason) this.finish = choice.finish_reason;
    }
    return out;
  }

  private text(kind: "message" | "reasoning", delta: string): string {
    let out = "";
    if (this.open?.kind !== kind) {
      out += this.close();
      this.open = { kind, id: newId(kind === "message" ? "msg" : "rs"), text: "" };
      const item = kind === "message" ? messageItem(this.open.id, "", "in_progress") : { type: "reasoning", id: this.open.id, summary: [], content: [] };
      out += this.event("response.output_item.added", { output_index: this.output.length, item });
      out += this.event("response.content_part.added", { ...this.where(), part: this.part("") });
    }
    this.open.text += delta;
    const type = kind === "message" ? "response.output_text.delta" : "response.reasoning_text.delta";
    return out + this.event(type, { ...this.where(), delta, ...(kind === "message" ? { logprobs: [] } : {}) });
  }

  private where() {
    return { item_id: this.open!.id, output_index: this.output.length, content_index: 0 };
  }

  private part(text: string) {
    return this.open!.kind === "message" ? { type: "output_text", text, annotations: [], logprobs: [] } : { type: "reasoning_text", text };
  }

  private callItem(status: string): OutputItem {
    const o = this.open as Extract<Open, { kind: "call" }> & { id: string };
    return { type: "function_call", id: o.id, call_id: o.callId, name: o.name, arguments: status === "completed" ? o.args : "", status };
  }

  /** The open item's closing events; it joins the output. */
  private close(): string {
    const o = this.open;
    if (!o) return "";
    let out = "";
    let item: OutputItem;
    if (o.kind === "call") {
      out += this.event("response.function_call_arguments.done", { item_id: o.id, output_index: this.output.length, name: o.name, arguments: o.args });
      item = this.callItem("completed");
    } else {
      const done = o.kind === "message" ? "response.output_text.done" : "response.reasoning_text.done";
      out += this.event(done, { ...this.where(), text: o.text, ...(o.kind === "message" ? { logprobs: [] } : {}) });
      out += this.event("response.content_part.done", { ...this.where(), part: this.part(o.text) });
      item = o.kind === "message" ? messageItem(o.id, o.text, "completed") : { type: "reasoning", id: o.id, summary: [], content: [{ type: "reasoning_text", text: o.text }] };
    }
    out += this.event("response.output_item.done", { output_index: this.output.length, item });
    this.output.push(item);
    this.open = null;
    return out;
  }

  /** Closes the open item; returns its events and the finished response (to store before it is sent). */
  finishItems(): { events: string; response: ResponseObject } {
    const events = this.close();
    return { events, response: responseObject(this.ctx, "completed", this.output, this.usage, this.finish) };
  }

  /** The last event, response.completed or response.incomplete; empty when already sent. */
  end(response: ResponseObject): string {
    if (this.ended) return "";
    this.ended = true;
    return this.event(response.status === "incomplete" ? "response.incomplete" : "response.completed", { response });
  }

  /** The stream broke off: response.failed, as OpenAI ends a stream that cannot finish. */
  fail(message: string): string {
    if (this.ended) return "";
    this.ended = true;
    const response = { ...responseObject(this.ctx, "failed", this.output, this.usage), error: { code: "server_error", message } };
    return this.event("response.failed", { response });
  }
}
