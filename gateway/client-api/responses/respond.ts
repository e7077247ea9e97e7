// Writes the engine's chat answer to the client as a Responses API response: the object, or its
// typed event stream translated as the engine's chunks arrive. The finished response is handed to
// `done` (the store) before the client is told it is complete, so a retrieve right after finds it.
// An engine's error is passed on in OpenAI's shape.
import type { Responder } from "../../router/proxy.ts";
import { engineError } from "../../errors.ts";
import { sendOpenAIError, writeJson } from "../errors.ts";
import type { OpenAIChatCompletion } from "../anthropic/response.ts";
import { outputOf, responseObject, type ChatUsage, type OutputItem, type ResponseContext, type ResponseObject } from "./response.ts";
import { ResponsesStream } from "./stream.ts";

export type Done = (response: ResponseObject, output: OutputItem[]) => Promise<void>;

/** SDKs read `output_text` as a convenience the SDK adds itself; the wire object carries only `output`. */
export function responsesResponder(ctx: ResponseContext, done: Done): Responder {
  return async (res, e, up, p) => {
    const headers = { "x-request-id": p.requestId, "x-llmgw-replica": e.id };
    const ctype = String(up.headers["content-type"] ?? "");
    if (up.statusCode !== 200 || !p.stream || !ctype.startsWith("text/event-stream")) {
      const text = await up.text();
      const ttftMs = performance.now() - p.started;
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
      if (up.statusCode !== 200) {
        sendOpenAIError(res, engineError(up.statusCode, text));
        return { status: up.statusCode, endpoint: e, usage: null, ttftMs };
      }
      const completion = JSON.parse(text) as OpenAIChatCompletion;
      const usage = (completion.usage ?? null) as ChatUsage | null;
      const output = outputOf(completion, ctx);
      const response = responseObject(ctx, "completed", output, usage, completion.choices[0]?.finish_reason);
      await done(response, output);
      writeJson(res, 200, response);
      return { status: 200, endpoint: e, usage, ttftMs };
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", ...headers });
    const stream = new ResponsesStream(ctx);
    res.write(stream.start());
    let ttftMs: number | null = null;
    try {
      await up.stream((text) => {
        ttftMs ??= performance.now() - p.started;
        const out = stream.push(text);
        if (out) res.write(out);
      }, res);
      const { events, response } = stream.finishItems();
      res.write(events);
      await done(response, stream.output);
      res.end(stream.end(response));
    } catch {
      // The client left, or the engine broke off: say so if anyone is listening.
      if (!res.writableEnded) res.end(stream.fail("the engine broke off the answer"));
      return { status: 499, endpoint: e, usage: stream.usage, ttftMs };
    }
    return { status: 200, endpoint: e, usage: stream.usage, ttftMs };
  };
}
