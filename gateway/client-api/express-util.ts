// What the express routes of the client API share: async handlers whose errors reach the error
// handler, and a body checked against a zod schema or a 400 naming the field.
import type { NextFunction, Response } from "express";
import type { z } from "zod";
import { ApiError } from "../errors.ts";
import type { Authed } from "./context.ts";
import { firstIssue } from "./schemas.ts";

/** An async route whose errors go to the error handler. */
export const wrap = (fn: (req: Authed, res: Response) => Promise<void>) => (req: Authed, res: Response, next: NextFunction) => void fn(req, res).catch(next);

export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const r = schema.safeParse(body ?? {});
  if (!r.success) {
    const { message, param } = firstIssue(r.error);
    throw new ApiError("invalid_request", message, { param: param || null });
  }
  return r.data;
}
