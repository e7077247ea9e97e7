// Errors in OpenAI's shape, with the status each kind of failure gets.
import type { Request, Response } from "express";

export type ErrorKind =
  | "invalid_request"
  | "authentication"
  | "permission"
  | "not_found"
  | "too_large"
  | "rate_limit"
  | "unavailable"
  | "timeout"
  | "upstream";

const STATUS: Record<ErrorKind, number> = {
  invalid_request: 400,
  authentication: 401,
  permission: 403,
  not_found: 404,
  too_large: 413,
  rate_limit: 429,
  unavailable: 503,
  timeout: 504,
  upstream: 502,
};

const TYPE: Record<ErrorKind, string> = {
  invalid_request: "invalid_request_error",
  authentication: "authentication_error",
  permission: "permission_error",
  not_found: "not_found_error",
  too_large: "invalid_request_error",
  rate_limit: "rate_limit_error",
  unavailable: "service_unavailable_error",
  timeout: "timeout_error",
  upstream: "api_error",
};

export class ApiError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly opts: { param?: string | null; code?: string | null; retryAfterS?: number } = {},
  ) {
    super(message);
  }
  get status(): number {
    return STATUS[this.kind];
  }
}

export function sendOpenAIError(res: Response, err: ApiError): void {
  if (err.opts.retryAfterS !== undefined) res.setHeader("retry-after", String(err.opts.retryAfterS));
  res.status(err.status).json({
    error: { message: err.message, type: TYPE[err.kind], param: err.opts.param ?? null, code: err.opts.code ?? null },
  });
}

/** Anthropic's names for the same kinds; the statuses stay those of the OpenAI routes. */
const ANTHROPIC_TYPE: Record<ErrorKind, string> = {
  invalid_request: "invalid_request_error",
  authentication: "authentication_error",
  permission: "permission_error",
  not_found: "not_found_error",
  too_large: "request_too_large",
  rate_limit: "rate_limit_error",
  unavailable: "overloaded_error",
  timeout: "api_error",
  upstream: "api_error",
};

export function sendAnthropicError(res: Response, err: ApiError): void {
  if (err.opts.retryAfterS !== undefined) res.setHeader("retry-after", String(err.opts.retryAfterS));
  res.status(err.status).json({ type: "error", error: { type: ANTHROPIC_TYPE[err.kind], message: err.message } });
}

/** Routes of Anthropic's API answer in its shape; every other route in OpenAI's. */
export function isAnthropicRoute(path: string): boolean {
  return path === "/v1/messages" || path.startsWith("/v1/messages/");
}

export function sendError(req: Request, res: Response, err: ApiError): void {
  if (isAnthropicRoute(req.originalUrl.split("?")[0]!)) sendAnthropicError(res, err);
  else sendOpenAIError(res, err);
}

/** The ErrorKind of an HTTP status an engine answered with. */
export function kindOfStatus(status: number): ErrorKind {
  const found = (Object.entries(STATUS) as [ErrorKind, number][]).find(([, s]) => s === status);
  return found ? found[0] : status >= 500 ? "upstream" : "invalid_request";
}
