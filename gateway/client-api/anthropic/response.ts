// The engine's OpenAI chat completion turned into an Anthropic message.
import { randomBytes } from "node:crypto";
import { signThinking } from "./signature.ts";

export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "refusal";

export type AnthropicBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "tool_use"; id: string; name: string; input: unknown };

export interface OpenAIChatCompletion {
  id?: string;
  choices: {
    message: {
      content?: string | null;
      reasoning_content?: string | null;
      reasoning?: string | null;
      tool_calls?: { id: string; function: { name: string; arguments: string } }[] | null;
    };
    finish_reason: string | null;
    /** vLLM: the stop string that ended the answer. */
    stop_reason?: string | number | null;
  }[];
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
}

/** What the translation needs to know of the request. */
export interface MessageContext {
  model: string;
  thinking: boolean;
  stopSequences: string[];
}

export function messageId(): string {
  return `msg_${randomBytes(12).toString("hex")}`;
}

export function stopReason(finish: string | null, matched: unknown, stops: string[]): { stop_reason: StopReason; stop_sequence: string | null } {
  if (finish === "length") return { stop_reason: "max_tokens", stop_sequence: null };
  if (finish === "tool_calls") return { stop_reason: "tool_use", stop_sequence: null };
  // A guardrail (or an engine's filter) ended the answer: Anthropic's own stop for a refused answer.
  if (finish === "content_filter") return { stop_reason: "refusal", stop_sequence: null };
  if (typeof matched === "string" && stops.includes(matched)) return { stop_reason: "stop_sequence", stop_sequence: matched };
  return { stop_reason: "end_turn", stop_sequence: null };
}

/** Tool arguments as an object; a model that wrote broken JSON gets its text kept under `_raw`. */
export function parseToolInput(args: string): unknown {
  if (!args) return {};
  try {
    return JSON.parse(args);
  } catch {
    return { _raw: args };
  }
}

export function toAnthropicMessage(c: OpenAIChatCompletion, ctx: MessageContext) {
  const choice = c.choices[0];
  const msg = choice?.message ?? {};
  const content: AnthropicBlock[] = [];
  const reasoning = msg.reasoning_content ?? msg.reasoning;
  if (ctx.thinking && reasoning) content.push({ type: "thinking", thinking: reasoning, signature: signThinking(reasoning) });
  if (msg.content) content.push({ type: "text", text: msg.content });
  for (const t of msg.tool_calls ?? []) content.push({ type: "tool_use", id: t.id, name: t.function.name, input: parseToolInput(t.function.arguments) });
  const finish = msg.tool_calls?.length ? "tool_calls" : (choice?.finish_reason ?? null);
  return {
    id: messageId(),
    type: "message" as const,
    role: "assistant" as const,
    model: ctx.model,
    content,
    ...stopReason(finish, choice?.stop_reason, ctx.stopSequences),
    usage: { input_tokens: c.usage?.prompt_tokens ?? 0, output_tokens: c.usage?.completion_tokens ?? 0 },
  };
}
