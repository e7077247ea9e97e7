// A Responses API request turned into the engine's OpenAI chat request: instructions as the system
// message, the earlier turns (from the store, with previous_response_id) before this turn's input,
// function calls as an assistant's tool_calls and their outputs as `tool` messages.
import { randomBytes } from "node:crypto";
import type { OpenAIMessage } from "../anthropic/request.ts";
import type { InputItem, ResponsesRequest } from "./schemas.ts";

export type { OpenAIMessage };

export const newId = (prefix: string): string => `${prefix}_${randomBytes(16).toString("hex")}`;

type Part = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string; detail?: string } };

/** This turn's input as chat messages, the system prompt left out (it is not carried to later turns). */
export function inputMessages(input: ResponsesRequest["input"]): OpenAIMessage[] {
  if (typeof input === "string") return [{ role: "user", content: input }];
  const out: OpenAIMessage[] = [];
  for (const item of input) {
    if (item.type === "function_call") {
      const call = { id: item.call_id, type: "function" as const, function: { name: item.name, arguments: item.arguments } };
      const last = out[out.length - 1];
      // Calls one after another are one assistant turn, as the engine's chat template wants them.
      if (last?.role === "assistant" && last.tool_calls) last.tool_calls.push(call);
      else out.push({ role: "assistant", content: null, tool_calls: [call] });
    } else if (item.type === "function_call_output") {
      const text = typeof item.output === "string" ? item.output : item.output.map((p) => p.text).join("");
      out.push({ role: "tool", tool_call_id: item.call_id, content: text });
    } else if (item.role === "assistant") {
      const text = typeof item.content === "string" ? item.content : item.content.map((p) => (p.type === "refusal" ? p.refusal : p.text)).join("");
      out.push({ role: "assistant", content: text });
    } else {
      const role = item.role === "developer" ? "system" : item.role;
      if (typeof item.content === "string") out.push({ role, content: item.content });
      else {
        const parts: Part[] = item.content.map((p) => (p.type === "input_text" ? { type: "text", text: p.text } : { type: "image_url", image_url: { url: p.image_url, ...(p.detail ? { detail: p.detail } : {}) } }));
        const only = parts.length === 1 && parts[0]!.type === "text" ? parts[0]!.text : null;
        out.push({ role, content: only ?? parts });
      }
    }
  }
  return out;
}

/** This turn's input as OpenAI lists it (GET /v1/responses/{id}/input_items): each item with an id. */
export function inputItemList(input: ResponsesRequest["input"]): Record<string, unknown>[] {
  const items: InputItem[] = typeof input === "string" ? [{ role: "user", content: input }] : input;
  return items.map((item) => {
    if (item.type === "function_call") return { ...item, id: item.id ?? newId("fc"), status: "completed" };
    if (item.type === "function_call_output") return { ...item, id: item.id ?? newId("fco"), status: "completed" };
    const content = typeof item.content === "string" ? [{ type: item.role === "assistant" ? "output_text" : "input_text", text: item.content }] : item.content;
    return { ...item, type: "message", id: "id" in item && item.id ? item.id : newId("msg"), status: "completed", content };
  });
}

/** Whether the engine should think: `reasoning.effort` none or minimal says no, any other effort yes. */
export function thinkingOf(r: ResponsesRequest): boolean | null {
  const effort = r.reasoning?.effort;
  if (effort === undefined || effort === null) return null;
  return effort !== "none" && effort !== "minimal";
}

export function toOpenAIChat(r: ResponsesRequest, earlier: OpenAIMessage[]): Record<string, unknown> {
  const messages: OpenAIMessage[] = [];
  if (r.instructions) messages.push({ role: "system", content: r.instructions });
  messages.push(...earlier, ...inputMessages(r.input));
  const out: Record<string, unknown> = { model: r.model, messages, stream: r.stream === true };
  if (r.max_output_tokens != null) out.max_tokens = r.max_output_tokens;
  if (r.temperature != null) out.temperature = r.temperature;
  if (r.top_p != null) out.top_p = r.top_p;
  if (r.user) out.user = r.user;
  if (r.tools?.length) {
    out.tools = r.tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description ?? undefined, parameters: t.parameters ?? undefined, strict: t.strict ?? undefined } }));
  }
  if (r.tool_choice !== undefined) out.tool_choice = typeof r.tool_choice === "string" ? r.tool_choice : { type: "function", function: { name: r.tool_choice.name } };
  if (r.parallel_tool_calls != null) out.parallel_tool_calls = r.parallel_tool_calls;
  const format = r.text?.format;
  if (format && format.type !== "text") {
    out.response_format =
      format.type === "json_object" ? { type: "json_object" } : { type: "json_schema", json_schema: { name: format.name, schema: format.schema, description: format.description, strict: format.strict ?? undefined } };
  }
  // Reasoning models behind vLLM/SGLang (Qwen3, DeepSeek-R1 templates) switch thinking with this, as /v1/messages does.
  const thinking = thinkingOf(r);
  if (thinking !== null) out.chat_template_kwargs = { enable_thinking: thinking };
  return out;
}
