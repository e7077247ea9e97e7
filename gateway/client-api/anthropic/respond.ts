// Writes the engine's OpenAI answer to the client as Anthropic's: a message, or its event stream
// translated as the engine's chunks arrive. An engine's error is passed on in Anthropic's shape.
import type { Responder } from "../../router/proxy.ts";
import { sendAnthropicError, writeJson } from "../errors.ts";
import { translatedResponder } from "../translated-responder.ts";
import { toAnthropicMessage, type MessageContext } from "./response.ts";
import { AnthropicStream, sseEvent } from "./stream.ts";

export function anthropicResponder(ctx: MessageContext): Responder {
  return translatedResponder({
    sendError: sendAnthropicError,
    whole(res, completion) {
      writeJson(res, 200, toAnthropicMessage(completion, ctx));
      return completion.usage ?? null;
    },
    stream() {
      const stream = new AnthropicStream(ctx);
      return {
        start: () => stream.start(),
        push: (text) => stream.push(text),
        end: () => stream.end(),
        fail: () => sseEvent("error", { error: { type: "api_error", message: "the engine broke off the answer" } }),
        get usage() {
          return stream.usage;
        },
      };
    },
  });
}
