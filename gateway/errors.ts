// The gateway's one error type: a kind of failure, its HTTP status, and what the client is told.
// Every layer throws it (router, auth, jobs); the client API answers it in each API's shape
// (client-api/errors.ts), so it lives below all of them.

export type ErrorKind =
  | "invalid_request"
  | "authentication"
  | "permission"
  | "not_found"
  | "method_not_allowed"
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
  method_not_allowed: 405,
  too_large: 413,
  rate_limit: 429,
  unavailable: 503,
  timeout: 504,
  upstream: 502,
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

/** The ErrorKind of an HTTP status an engine answered with. */
export function kindOfStatus(status: number): ErrorKind {
  const found = (Object.entries(STATUS) as [ErrorKind, number][]).find(([, s]) => s === status);
  return found ? found[0] : status >= 500 ? "upstream" : "invalid_request";
}

/** An engine's refusal as the client sees it: its own message where it sent OpenAI's error shape. */
export function engineError(status: number, text: string): ApiError {
  let message = `the engine answered ${status}`;
  try {
    message = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? message;
  } catch {
    // not JSON: keep the generic message
  }
  return new ApiError(kindOfStatus(status), message);
}
