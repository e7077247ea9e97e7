// Guardrails on tool calls (docs/guardrails.md): a call's arguments are read by the input rules
// before they leave, and its answer as the prompt it becomes; a block withholds it, naming the
// rule, never the text; redact rewrites values to placeholders (the answer is not restored: the
// model reads the placeholders). The policies that apply are those of the key, its project, team
// and org, and `model:mcp:<server>.<tool>`.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { KeyInfo } from "../auth/key-cache.ts";
import { checkInput, GuardBlock } from "../guard/input.ts";
import type { GuardService } from "../guard/service.ts";

export type Guarded<T> = { ok: true; value: T } | { ok: false; message: string };

/** The texts through the key's policy: the same array when nothing changed. */
function check(guard: GuardService, key: KeyInfo, tool: string, texts: string[]): Guarded<string[]> {
  const model = `mcp:${tool}`;
  const m = guard.policyFor(key, model);
  if (!m) return { ok: true, value: texts };
  try {
    const out = checkInput(m, { input: texts });
    guard.record(out.decisions, key, model);
    return { ok: true, value: out.body.input as string[] };
  } catch (err) {
    if (!(err instanceof GuardBlock)) throw err;
    guard.record(err.decisions, key, model);
    const d = err.decisions[err.decisions.length - 1]!;
    return { ok: false, message: `withheld by the guardrail rule '${d.rule}' of policy '${d.policy}'` };
  }
}

export function guardArgs(guard: GuardService, key: KeyInfo, tool: string, args: Record<string, unknown>): Guarded<Record<string, unknown>> {
  const json = JSON.stringify(args);
  const r = check(guard, key, tool, [json]);
  if (!r.ok || r.value[0] === json) return r.ok ? { ok: true, value: args } : r;
  try {
    return { ok: true, value: JSON.parse(r.value[0]!) as Record<string, unknown> };
  } catch {
    return { ok: false, message: "the arguments could not be redacted" };
  }
}

export function guardAnswer(guard: GuardService, key: KeyInfo, tool: string, result: CallToolResult): Guarded<CallToolResult> {
  const texts = result.content.flatMap((c) => (c.type === "text" ? [c.text] : []));
  const structured = result.structuredContent === undefined ? [] : [JSON.stringify(result.structuredContent)];
  const r = check(guard, key, tool, [...texts, ...structured]);
  if (!r.ok) return r;
  if (r.value.every((t, i) => t === [...texts, ...structured][i])) return { ok: true, value: result };
  let i = 0;
  const content = result.content.map((c) => (c.type === "text" ? { ...c, text: r.value[i++]! } : c));
  // Structured content that had to be redacted is left out: its text form above carries it.
  return { ok: true, value: { ...result, content, structuredContent: undefined } };
}
