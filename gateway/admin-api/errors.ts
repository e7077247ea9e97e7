// Admin API errors: JSON naming the field at fault, with the status that fits.
import { isGrpcServiceError, ServiceError, WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError } from "@temporalio/client";
import type { NextFunction, Request, Response } from "express";
import { z } from "zod";
import { log } from "../../common/logging.ts";

export class AdminError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field: string | null = null,
  ) {
    super(message);
  }
}

/** Parses with zod or throws a 400 naming the first field at fault. */
export function check<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const field = issue.path.map(String).join(".") || null;
  throw new AdminError(400, `${field ?? "body"}: ${issue.message}`, field);
}

/** gRPC codes that say Temporal is down or slow for now (UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED), not that the call was wrong. */
const TRANSIENT = new Set([14, 4, 8]);

/** Temporal did not answer: the call may be made again (503 with Retry-After), rather than an internal error. */
function temporalUnavailable(err: unknown): boolean {
  if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  const grpc = isGrpcServiceError(err) ? err : err instanceof ServiceError && isGrpcServiceError(err.cause) ? err.cause : null;
  return grpc !== null && TRANSIENT.has(grpc.code);
}

export function adminErrorHandler(err: unknown, req: Request, res: Response, _next: NextFunction): void {
  if (res.headersSent) return void res.end();
  const e = err as { type?: string; status?: number; expose?: boolean; message?: string };
  const a =
    err instanceof AdminError
      ? err
      : // The model's workflow refused the command (its validator: another operation runs, nothing to stop).
        err instanceof WorkflowUpdateFailedError
        ? new AdminError(409, `refused by the model's workflow: ${(err.cause as Error | undefined)?.message ?? err.message}`)
        : temporalUnavailable(err)
        ? new AdminError(503, "Temporal did not answer in time, so whether this took effect is not known: look, then try again")
        : e?.type === "entity.parse.failed"
        ? new AdminError(400, "the body is not valid JSON")
        : // body-parser's and the router's own refusals (a body too large, a path that does not decode)
          e?.expose && e.status && e.status >= 400 && e.status < 500
          ? new AdminError(e.status, e.message ?? "bad request")
          : new AdminError(500, "internal error");
  // The caller sees only "internal error"; the operator's log says what it was (no body, no headers).
  if (a.status >= 500 && !(err instanceof AdminError)) log.error("admin request failed inside the gateway", { method: req.method, path: req.path, error: err as Error });
  if (a.status === 503) res.setHeader("retry-after", "5");
  res.status(a.status).json({ error: { message: a.message, field: a.field } });
}
