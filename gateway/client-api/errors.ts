// Errors answered to clients: an ApiError (../errors.ts) in OpenAI's shape or Anthropic's, by route.
import type { IncomingMessage, ServerResponse } from "node:http";
import { log } from "../../common/logging.ts";
import { ApiError, type ErrorKind } from "../errors.ts";

const TYPE: Record<ErrorKind, string> = {
  invalid_request: "invalid_request_error",
  authentication: "authentication_error",
  permission: "permission_error",
  not_found: "not_found_error",
  method_not_allowed: "invalid_request_error",
  too_large: "invalid_request_error",
  rate_limit: "rate_limit_error",
  unavailable: "service_unavailable_error",
  timeout: "timeout_error",
  upstream: "api_error",
};

/** A JSON answer with plain node (express's `res.json` is not there on the hot path, gateway/client-api/hot-path.ts). */
export function writeJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

export function sendOpenAIError(res: ServerResponse, err: ApiError): void {
  if (err.opts.retryAfterS !== undefined) res.setHeader("retry-after", String(err.opts.retryAfterS));
  writeJson(res, err.status, {
    error: { message: err.message, type: TYPE[err.kind], param: err.opts.param ?? null, code: err.opts.code ?? null },
  });
}

/** Anthropic's names for the same kinds; the statuses stay those of the OpenAI routes. */
const ANTHROPIC_TYPE: Record<ErrorKind, string> = {
  invalid_request: "invalid_request_error",
  authentication: "authentication_error",
  permission: "permission_error",
  not_found: "not_found_error",
  method_not_allowed: "invalid_request_error",
  too_large: "request_too_large",
  rate_limit: "rate_limit_error",
  unavailable: "overloaded_error",
  timeout: "api_error",
  upstream: "api_error",
};

export function sendAnthropicError(res: ServerResponse, err: ApiError): void {
  if (err.opts.retryAfterS !== undefined) res.setHeader("retry-after", String(err.opts.retryAfterS));
  writeJson(res, err.status, { type: "error", error: { type: ANTHROPIC_TYPE[err.kind], message: err.message } });
}

/** Routes of Anthropic's API answer in its shape; every other route in OpenAI's. */
export function isAnthropicRoute(path: string): boolean {
  // Any case, as express and the hot path match routes (hot-path.ts).
  const p = path.toLowerCase();
  return p === "/v1/messages" || p.startsWith("/v1/messages/");
}

export function sendError(req: IncomingMessage & { originalUrl?: string }, res: ServerResponse, err: ApiError): void {
  if (isAnthropicRoute((req.originalUrl ?? req.url ?? "").split("?")[0]!)) sendAnthropicError(res, err);
  else sendOpenAIError(res, err);
}

/** Any failure as the client's answer: body-parser-like errors by their kind, anything else a logged 500. */
export function answerError(req: IncomingMessage & { originalUrl?: string; requestId?: string }, res: ServerResponse, err: unknown): void {
  if (res.headersSent) return void res.end();
  if (req.requestId && !res.hasHeader("x-request-id")) res.setHeader("x-request-id", req.requestId);
  const apiErr = toApiError(err);
  if (!(err instanceof ApiError) && apiErr.status >= 500) log.error("request failed inside the gateway", { requestId: req.requestId, error: err as Error });
  sendError(req, res, apiErr);
}

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as { type?: string; status?: number; message?: string };
  if (e?.type === "entity.parse.failed") return new ApiError("invalid_request", `the body is not valid JSON: ${e.message}`, { code: "invalid_json" });
  if (e?.type === "entity.too.large") return new ApiError("too_large", "the body is larger than this gateway accepts", { code: "body_too_large" });
  if (e?.status && e.status >= 400 && e.status < 500) return new ApiError("invalid_request", e.message ?? "bad request");
  return new ApiError("upstream", "the gateway failed to handle this request", { code: "internal_error" });
}
