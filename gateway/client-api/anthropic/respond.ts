// Writes the engine's OpenAI answer to the client as Anthropic's: a message, or its event stream
// translated as the engine's chunks arrive. An engine's error is passed on in Anthropic's shape.
import type { ServerResponse } from "node:http";
import type { Responder } from "../../router/proxy.ts";
import { engineError } from "../../errors.ts";
import { sendAnthropicError, writeJson } from "../errors.ts";
import { toAnthropicMessage, type MessageContext, type OpenAIChatCompletion } from "./response.ts";
import { AnthropicStream, sseEvent } from "./stream.ts";

export function anthropicResponder(ctx: MessageContext): Responder {
  return async (res, e, up, p) => {
    const headers = { "x-request-id": p.requestId, "x-llmgw-replica": e.id };
    const ctype = String(up.headers["content-type"] ?? "");
    if (up.statusCode !== 200 || !p.stream || !ctype.startsWith("text/event-stream")) {
      const text = await up.text();
      const ttftMs = performance.now() - p.started;
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
      if (up.statusCode !== 200) {
        sendAnthropicError(res, engineError(up.statusCode, text));
        return { status: up.statusCode, endpoint: e, usage: null, ttftMs };
      }
      const completion = JSON.parse(text) as OpenAIChatCompletion;
      writeJson(res, 200, toAnthropicMessage(completion, ctx));
      return { status: 200, endpoint: e, usage: completion.usage ?? null, ttftMs };
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", ...headers });
    const stream = new AnthropicStream(ctx);
    res.write(stream.start());
    let ttftMs: number | null = null;
    try {
      await up.stream((text) => {
        ttftMs ??= performance.now() - p.started;
        const out = stream.push(text);
        if (out) res.write(out);
      }, res);
      res.end(stream.end());
    } catch {
      // The client left, or the engine broke off: say so if anyone is listening.
      endWithError(res);
      return { status: 499, endpoint: e, usage: stream.usage, ttftMs };
    }
    return { status: 200, endpoint: e, usage: stream.usage, ttftMs };
  };
}

function endWithError(res: ServerResponse): void {
  if (res.writableEnded) return;
  res.end(sseEvent("error", { error: { type: "api_error", message: "the engine broke off the answer" } }));
}
