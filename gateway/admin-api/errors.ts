// Admin API errors: JSON naming the field at fault, with the status that fits.
import { WorkflowUpdateFailedError } from "@temporalio/client";
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

export function adminErrorHandler(err: unknown, req: Request, res: Response, _next: NextFunction): void {
  if (res.headersSent) return void res.end();
  const e = err as { type?: string; status?: number; expose?: boolean; message?: string };
  const a =
    err instanceof AdminError
      ? err
      : // The model's workflow refused the command (its validator: another operation runs, nothing to stop).
        err instanceof WorkflowUpdateFailedError
        ? new AdminError(409, `refused by the model's workflow: ${(err.cause as Error | undefined)?.message ?? err.message}`)
        : e?.type === "entity.parse.failed"
        ? new AdminError(400, "the body is not valid JSON")
        : // body-parser's and the router's own refusals (a body too large, a path that does not decode)
          e?.expose && e.status && e.status >= 400 && e.status < 500
          ? new AdminError(e.status, e.message ?? "bad request")
          : new AdminError(500, "internal error");
  // The caller sees only "internal error"; the operator's log says what it was (no body, no headers).
  if (a.status >= 500 && !(err instanceof AdminError)) log.error("admin request failed inside the gateway", { method: req.method, path: req.path, error: err as Error });
  res.status(a.status).json({ error: { message: a.message, field: a.field } });
}
