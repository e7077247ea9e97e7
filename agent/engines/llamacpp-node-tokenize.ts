// The node-llama-cpp engine's tokenizer routes, as llama-server answers them: POST /tokenize
// ({content, add_special, parse_special, with_pieces} → {tokens}) and POST /apply-template
// ({messages} → {prompt}). /tokenize also takes vLLM's chat form ({messages} → {count, tokens,
// max_model_len}), counted through the chat wrapper exactly as the chat route counts prompt_tokens:
// node-llama-cpp tokenizes a template's pieces one by one, so its rendered text tokenized again can
// differ, and the gateway's exact count (gateway/router/token-count.ts) asks this form first.
import type { Express, Response } from "express";
import { z } from "zod";

const text = z.string();
const message = z.object({
  role: z.enum(["system", "developer", "user", "assistant"]),
  content: z.union([text, z.array(z.object({ type: z.literal("text"), text })), z.null()]).optional(),
});
export type ChatMessage = z.infer<typeof message>;

const contentBody = z.object({ content: text, add_special: z.boolean().default(false), parse_special: z.boolean().default(true), with_pieces: z.boolean().default(false) });
const messagesBody = z.object({ messages: z.array(message).min(1) });

export interface Tokenizer {
  /** The templated chat's tokens, as the chat route feeds them to the model (its BOS included). */
  chat(messages: ChatMessage[]): number[];
  /** The templated chat as text, its leading BOS left for the tokenizer to add (llama-server's /apply-template). */
  template(messages: ChatMessage[]): string;
  text(content: string, addSpecial: boolean, parseSpecial: boolean): number[];
  piece(token: number): string;
  contextSize(): number;
}

export function tokenizerRoutes(app: Express, tok: () => Tokenizer | null, error: (res: Response, code: number, message: string) => void): void {
  app.post("/tokenize", (req, res) => {
    const t = tok();
    if (!t) return error(res, 503, "Loading model");
    const body = (req.body ?? {}) as Record<string, unknown>;
    if ("messages" in body) {
      const b = messagesBody.safeParse(body);
      if (!b.success) return error(res, 400, z.prettifyError(b.error));
      const tokens = t.chat(b.data.messages);
      return res.json({ count: tokens.length, max_model_len: t.contextSize(), tokens, token_strs: null });
    }
    const b = contentBody.safeParse(body);
    if (!b.success) return error(res, 400, z.prettifyError(b.error));
    const tokens = t.text(b.data.content, b.data.add_special, b.data.parse_special);
    res.json({ tokens: b.data.with_pieces ? tokens.map((id) => ({ id, piece: t.piece(id) })) : tokens });
  });
  app.post("/apply-template", (req, res) => {
    const t = tok();
    if (!t) return error(res, 503, "Loading model");
    const b = messagesBody.safeParse(req.body);
    if (!b.success) return error(res, 400, z.prettifyError(b.error));
    res.json({ prompt: t.template(b.data.messages) });
  });
}
