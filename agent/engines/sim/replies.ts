// How the sim writes its HTTP answers: JSON with its length, OpenAI's error shape, SSE headers, and
// "connection: close" on everything once it is stopping, so clients let go of their connections.
import type http from "node:http";

export const JSON_TYPE = "application/json";
const SSE_TYPE = "text/event-stream; charset=utf-8";

export function errorBody(message: string, type: string, param: string | null, code: string | null): string {
  return JSON.stringify({ error: { message, type, param, code } });
}

export const NOT_FOUND_BODY = errorBody("Not Found", "invalid_request_error", null, null);
export const UNAUTHORIZED_BODY = errorBody(
  "Incorrect API key provided. You can find your API key in your settings.",
  "invalid_request_error",
  null,
  "invalid_api_key",
);
export const LOADING_BODY = errorBody("The model is loading; try again shortly.", "service_unavailable_error", null, "model_loading");
export const STOPPING_BODY = errorBody("The engine is shutting down.", "service_unavailable_error", null, "shutting_down");

export class Replies {
  /** Set when the server closes: every answer from then on closes its connection. */
  stopping = false;

  send(res: http.ServerResponse, status: number, body: string, reqId: string | undefined, type = JSON_TYPE): void {
    const headers: Record<string, string | number> = {
      "content-type": type,
      "content-length": Buffer.byteLength(body),
    };
    if (reqId !== undefined) headers["x-request-id"] = reqId;
    if (status === 503) headers["retry-after"] = 1;
    if (this.stopping) headers["connection"] = "close";
    res.writeHead(status, headers);
    res.end(body);
  }

  sendError(res: http.ServerResponse, status: number, message: string, param: string | null, reqId: string | undefined): void {
    const type = status >= 500 ? "server_error" : "invalid_request_error";
    this.send(res, status, errorBody(message, type, param, null), reqId);
  }

  /** The headers of a stream, sent at once (once only) so the client sees the answer begin. */
  startStream(res: http.ServerResponse, reqId: string | undefined): void {
    if (res.headersSent) return;
    const headers: Record<string, string> = { "content-type": SSE_TYPE, "cache-control": "no-cache" };
    if (reqId !== undefined) headers["x-request-id"] = reqId;
    if (this.stopping) headers["connection"] = "close";
    res.writeHead(200, headers);
    res.flushHeaders();
  }
}

/** A small JSON body; undefined when it is not JSON (the caller answers as vLLM does). */
export async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const parts: Buffer[] = [];
  for await (const c of req) parts.push(c as Buffer);
  try {
    return JSON.parse(Buffer.concat(parts).toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}

/** Reads and discards a body we do not need, so the connection can be reused. */
export function drain(req: http.IncomingMessage): void {
  if (req.complete) return;
  req.resume();
}
