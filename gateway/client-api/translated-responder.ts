// A responder for an API the engines do not speak (Anthropic's messages, OpenAI's Responses): the
// engine's chat answer translated as it comes. What every such API does alike is here: its
// headers, an engine's error passed on in the API's own shape, the whole answer's parse, the
// stream's time to first token, and a stream that broke off ended in the API's way. Each API brings
// its error writer, its whole-answer writer and its stream translator.
import type { ServerResponse } from "node:http";
import { engineError, type ApiError } from "../errors.ts";
import type { Responder } from "../router/proxy.ts";
import type { Usage } from "../router/sse-usage.ts";
import type { OpenAIChatCompletion } from "./anthropic/response.ts";

/** An API's translation of the engine's chat stream into its own events. */
export interface TranslatedStream {
  /** The events that open the stream. */
  start(): string;
  /** The engine's text as it comes, translated. */
  push(text: string): string;
  /** The events that close the stream, once the engine's answer has ended (`write` sends some ahead). */
  end(write: (s: string) => void): string | Promise<string>;
  /** The last event when the engine broke off or the client left. */
  fail(): string;
  readonly usage: Usage | null;
}

export interface Translation {
  /** Writes an ApiError in the API's shape. */
  sendError(res: ServerResponse, err: ApiError): void;
  /** Writes a whole answer in the API's shape; answers its usage. */
  whole(res: ServerResponse, completion: OpenAIChatCompletion): Promise<Usage | null> | Usage | null;
  stream(): TranslatedStream;
}

export function translatedResponder(t: Translation): Responder {
  return async (res, e, up, p) => {
    const headers = { "x-request-id": p.requestId, "x-llmgw-replica": e.id };
    const ctype = String(up.headers["content-type"] ?? "");
    if (up.statusCode !== 200 || !p.stream || !ctype.startsWith("text/event-stream")) {
      const text = await up.text();
      const ttftMs = performance.now() - p.started;
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
      if (up.statusCode !== 200) {
        t.sendError(res, engineError(up.statusCode, text));
        return { status: up.statusCode, endpoint: e, usage: null, ttftMs };
      }
      const usage = await t.whole(res, JSON.parse(text) as OpenAIChatCompletion);
      return { status: 200, endpoint: e, usage, ttftMs };
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", ...headers });
    const stream = t.stream();
    res.write(stream.start());
    let ttftMs: number | null = null;
    try {
      await up.stream((text) => {
        ttftMs ??= performance.now() - p.started;
        const out = stream.push(text);
        if (out) res.write(out);
      }, res);
      res.end(await stream.end((s) => res.write(s)));
    } catch {
      // The client left, or the engine broke off: say so if anyone is listening.
      if (!res.writableEnded) res.end(stream.fail());
      return { status: 499, endpoint: e, usage: stream.usage, ttftMs };
    }
    return { status: 200, endpoint: e, usage: stream.usage, ttftMs };
  };
}
