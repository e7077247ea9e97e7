// The input stage: every text the model will read (user turns, the system prompt, tool results,
// a completion's prompt, embeddings' input, a rerank's query and documents) checked by the merged policy's input rules (./check.ts).
import { TextCheck, type GuardDecision } from "./check.ts";
import type { MergedPolicy } from "./merge.ts";
import type { Redactions } from "./redactions.ts";

export { GuardBlock, type GuardDecision } from "./check.ts";

export interface InputOutcome {
  /** The body to send on: the same object when nothing was redacted. */
  body: Record<string, unknown>;
  redactions: Redactions | null;
  decisions: GuardDecision[];
}

/** Checks a request body (in OpenAI's shapes: /v1/messages is translated before it gets here). */
export function checkInput(m: MergedPolicy, body: Record<string, unknown>): InputOutcome {
  const c = new TextCheck(m.input, "input");
  let out = body;
  const set = (field: string, v: unknown) => {
    if (v !== body[field]) out = out === body ? { ...body, [field]: v } : Object.assign(out, { [field]: v });
  };
  if (Array.isArray(body.messages)) {
    let changed = false;
    const msgs = (body.messages as unknown[]).map((msg) => {
      if (msg === null || typeof msg !== "object") return msg;
      const content = (msg as { content?: unknown }).content;
      const next = c.content(content);
      if (next === content) return msg;
      changed = true;
      return { ...(msg as object), content: next };
    });
    if (changed) set("messages", msgs);
  }
  if (body.prompt !== undefined) set("prompt", c.content(body.prompt));
  if (body.input !== undefined) set("input", c.content(body.input));
  // /v1/rerank: the query and every document.
  if (body.query !== undefined) set("query", c.content(body.query));
  if (body.documents !== undefined) set("documents", c.content(body.documents));
  return { body: out, redactions: c.redactions, decisions: c.decisions };
}
