// Writes the engine's chat answer to the client as a Responses API response: the object, or its
// typed event stream translated as the engine's chunks arrive. The finished response is handed to
// `done` (the store) before the client is told it is complete, so a retrieve right after finds it.
// An engine's error is passed on in OpenAI's shape.
import type { Responder } from "../../router/proxy.ts";
import { sendOpenAIError, writeJson } from "../errors.ts";
import { translatedResponder } from "../translated-responder.ts";
import { outputOf, responseObject, type ChatUsage, type OutputItem, type ResponseContext, type ResponseObject } from "./response.ts";
import { ResponsesStream } from "./stream.ts";

export type Done = (response: ResponseObject, output: OutputItem[]) => Promise<void>;

/** SDKs read `output_text` as a convenience the SDK adds itself; the wire object carries only `output`. */
export function responsesResponder(ctx: ResponseContext, done: Done): Responder {
  return translatedResponder({
    sendError: sendOpenAIError,
    async whole(res, completion) {
      const usage = (completion.usage ?? null) as ChatUsage | null;
      const output = outputOf(completion, ctx);
      const response = responseObject(ctx, "completed", output, usage, completion.choices[0]?.finish_reason);
      await done(response, output);
      writeJson(res, 200, response);
      return usage;
    },
    stream() {
      const stream = new ResponsesStream(ctx);
      return {
        start: () => stream.start(),
        push: (text) => stream.push(text),
        async end(write) {
          const { events, response } = stream.finishItems();
          write(events);
          await done(response, stream.output);
          return stream.end(response);
        },
        fail: () => stream.fail("the engine broke off the answer"),
        get usage() {
          return stream.usage;
        },
      };
    },
  });
}
