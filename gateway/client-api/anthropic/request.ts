// An Anthropic Messages request turned into the engine's OpenAI chat request. Tool results become
// `tool` messages (which OpenAI wants right after the assistant's call, so they go before the
// user's other content); an assistant's tool_use blocks become its tool_calls, its thinking is dropped.
import type { AnthropicMessage, CountTokensRequest, MessagesRequest, UserBlock } from "./schemas.ts";

type OpenAIPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };
export type OpenAIMessage =
  | { role: "system" | "user"; content: string | OpenAIPart[] }
  | { role: "assistant"; content: string | null; tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[] }
  | { role: "tool"; tool_call_id: string; content: string };

export function toOpenAIChat(r: MessagesRequest): Record<string, unknown> {
  const out: Record<string, unknown> = { ...toOpenAIPrompt(r), model: r.model, max_tokens: r.max_tokens, stream: r.stream === true };
  if (r.stop_sequences?.length) out.stop = r.stop_sequences;
  if (r.temperature !== undefined) out.temperature = r.temperature;
  if (r.top_p !== undefined) out.top_p = r.top_p;
  if (r.top_k !== undefined) out.top_k = r.top_k; // vLLM and SGLang take it as an extension
  if (r.metadata?.user_id) out.user = r.metadata.user_id;
  return out;
}

/** The part both routes share: messages, tools and the thinking switch. */
export function toOpenAIPrompt(r: CountTokensRequest): { messages: OpenAIMessage[] } & Record<string, unknown> {
  const messages: OpenAIMessage[] = [];
  if (r.system !== undefined) {
    const text = typeof r.system === "string" ? r.system : r.system.map((b) => b.text).join("\n");
    if (text) messages.push({ role: "system", content: text });
  }
  for (const m of r.messages) messages.push(...toOpenAIMessages(m));
  const out: { messages: OpenAIMessage[] } & Record<string, unknown> = { messages };
  if (r.tools?.length) {
    out.tools = r.tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.input_schema } }));
  }
  const tc = r.tool_choice;
  if (tc) {
    out.tool_choice = tc.type === "auto" ? "auto" : tc.type === "any" ? "required" : tc.type === "none" ? "none" : { type: "function", function: { name: tc.name } };
    if ("disable_parallel_tool_use" in tc && tc.disable_parallel_tool_use) out.parallel_tool_calls = false;
  }
  // Reasoning models behind vLLM/SGLang (Qwen3, DeepSeek-R1 templates) switch thinking with this.
  if (r.thinking) out.chat_template_kwargs = { enable_thinking: r.thinking.type === "enabled" };
  return out;
}

function toOpenAIMessages(m: AnthropicMessage): OpenAIMessage[] {
  if (typeof m.content === "string") return [{ role: m.role, content: m.content }];
  if (m.role === "assistant") {
    let text = "";
    const calls: { id: string; type: "function"; function: { name: string; arguments: string } }[] = [];
    for (const b of m.content) {
      if (b.type === "text") text += b.text;
      else if (b.type === "tool_use") calls.push({ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input) } });
    }
    return [calls.length ? { role: "assistant", content: text || null, tool_calls: calls } : { role: "assistant", content: text }];
  }
  const out: OpenAIMessage[] = [];
  const parts: OpenAIPart[] = [];
  for (const b of m.content) {
    if (b.type === "tool_result") {
      const text = typeof b.content === "string" ? b.content : (b.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("");
      out.push({ role: "tool", tool_call_id: b.tool_use_id, content: b.is_error ? `error: ${text}` : text });
    } else parts.push(toOpenAIPart(b));
  }
  const only = parts.length === 1 ? parts[0]! : null;
  if (parts.length) out.push({ role: "user", content: only?.type === "text" ? only.text : parts });
  return out;
}

function toOpenAIPart(b: Exclude<UserBlock, { type: "tool_result" }>): OpenAIPart {
  if (b.type === "text") return { type: "text", text: b.text };
  const url = b.source.type === "base64" ? `data:${b.source.media_type};base64,${b.source.data}` : b.source.url;
  return { type: "image_url", image_url: { url } };
}
