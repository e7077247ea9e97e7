// The engine's chat completion turned into a Responses API `response` object: its output items
// (reasoning when asked for, the message, function calls), status, usage, and the request's
// settings echoed as OpenAI does.
import type { OpenAIChatCompletion } from "../anthropic/response.ts";
import { newId, thinkingOf, type OpenAIMessage } from "./request.ts";
import type { ResponsesRequest } from "./schemas.ts";

export type OutputItem =
  | { type: "reasoning"; id: string; summary: []; content: { type: "reasoning_text"; text: string }[]; status?: string }
  | { type: "message"; id: string; status: string; role: "assistant"; content: { type: "output_text"; text: string; annotations: []; logprobs: [] }[] }
  | { type: "function_call"; id: string; call_id: string; name: string; arguments: string; status: string };

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

/** What the translation needs of the request, and what the answer is stored with. */
export interface ResponseContext {
  id: string;
  createdAt: number;
  request: ResponsesRequest;
  /** Whether reasoning items are shown (the request named an effort that thinks). */
  thinking: boolean;
  store: boolean;
}

export function responseContext(request: ResponsesRequest, store: boolean): ResponseContext {
  return { id: newId("resp"), createdAt: Math.floor(Date.now() / 1000), request, thinking: thinkingOf(request) === true, store };
}

export function usageOf(u: ChatUsage | null | undefined) {
  const input = u?.prompt_tokens ?? 0;
  const output = u?.completion_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: Math.min(u?.prompt_tokens_details?.cached_tokens ?? 0, input) },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: u?.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: input + output,
  };
}

type Status = "in_progress" | "completed" | "incomplete" | "failed";

/** The response object; `finish` is the engine's finish_reason (length: incomplete, max_output_tokens; content_filter, a guardrail's block: incomplete, content_filter). */
export function responseObject(ctx: ResponseContext, status: Status, output: OutputItem[], usage: ChatUsage | null, finish?: string | null) {
  const r = ctx.request;
  const incomplete = status === "completed" && (finish === "length" || finish === "content_filter");
  const format = r.text?.format ?? { type: "text" };
  return {
    id: ctx.id,
    object: "response" as const,
    created_at: ctx.createdAt,
    status: incomplete ? ("incomplete" as const) : status,
    background: false,
    error: null,
    incomplete_details: incomplete ? { reason: finish === "length" ? ("max_output_tokens" as const) : ("content_filter" as const) } : null,
    instructions: r.instructions ?? null,
    max_output_tokens: r.max_output_tokens ?? null,
    model: r.model,
    output,
    parallel_tool_calls: r.parallel_tool_calls ?? true,
    previous_response_id: r.previous_response_id ?? null,
    reasoning: { effort: r.reasoning?.effort ?? null, summary: null },
    store: ctx.store,
    temperature: r.temperature ?? 1,
    text: { format },
    tool_choice: r.tool_choice ?? "auto",
    tools: (r.tools ?? []).map((t) => ({ type: "function" as const, name: t.name, description: t.description ?? null, parameters: t.parameters ?? null, strict: t.strict ?? true })),
    top_p: r.top_p ?? 1,
    truncation: "disabled" as const,
    usage: status === "in_progress" ? null : usageOf(usage),
    user: r.user ?? null,
    metadata: r.metadata ?? {},
  };
}
export type ResponseObject = ReturnType<typeof responseObject>;

export function messageItem(id: string, text: string, status: string): OutputItem {
  return { type: "message", id, status, role: "assistant", content: [{ type: "output_text", text, annotations: [], logprobs: [] }] };
}

/** The output items of a whole completion. */
export function outputOf(c: OpenAIChatCompletion, ctx: ResponseContext): OutputItem[] {
  const msg = c.choices[0]?.message ?? {};
  const out: OutputItem[] = [];
  const reasoning = msg.reasoning_content ?? msg.reasoning;
  if (ctx.thinking && reasoning) out.push({ type: "reasoning", id: newId("rs"), summary: [], content: [{ type: "reasoning_text", text: reasoning }] });
  if (msg.content) out.push(messageItem(newId("msg"), msg.content, "completed"));
  for (const t of msg.tool_calls ?? []) out.push({ type: "function_call", id: newId("fc"), call_id: t.id, name: t.function.name, arguments: t.function.arguments, status: "completed" });
  return out;
}

/** The answer as chat messages, for the next turn that names this response as its previous one. */
export function answerMessages(output: OutputItem[]): OpenAIMessage[] {
  const text = output.flatMap((o) => (o.type === "message" ? o.content.map((p) => p.text) : [])).join("");
  const calls = output.flatMap((o) => (o.type === "function_call" ? [{ id: o.call_id, type: "function" as const, function: { name: o.name, arguments: o.arguments } }] : []));
  return [calls.length ? { role: "assistant", content: text || null, tool_calls: calls } : { role: "assistant", content: text }];
}
