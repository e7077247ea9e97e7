// SCIM's own error shape (RFC 7644 §3.12): {schemas: [...Error], status, scimType?, detail}, for
// every refusal on /scim/v2, body-parser's and the router's included, so a provider's log says why.
import type { NextFunction, Request, Response } from "express";
import SCIMMY from "scimmy";
import { log } from "../../common/logging.ts";

export const SCIM_CONTENT_TYPE = "application/scim+json";

export type ScimType = "invalidFilter" | "tooMany" | "uniqueness" | "mutability" | "invalidSyntax" | "invalidPath" | "noTarget" | "invalidValue" | "invalidVers" | "sensitive";

// scimmy's types say string, but its errors take null for "no scimType" (and leave it out).
export const scimError = (status: number, scimType: ScimType | null, detail: string) => new SCIMMY.Types.Error(status, scimType as string, detail);

export function sendScimError(res: Response, status: number, scimType: string | null, detail: string): void {
  const body: Record<string, unknown> = { schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: String(status), detail };
  if (scimType) body.scimType = scimType;
  res.status(status).type(SCIM_CONTENT_TYPE).send(JSON.stringify(body));
}

export function scimErrorHandler(err: unknown, req: Request, res: Response, _next: NextFunction): void {
  if (res.headersSent) return void res.end();
  const e = err as { status?: number; scimType?: string; message?: string; type?: string; expose?: boolean };
  if (err instanceof SCIMMY.Types.Error) return sendScimError(res, e.status ?? 400, e.scimType ?? null, e.message ?? "bad request");
  // scimmy throws TypeError for values its schemas refuse (a string where a boolean goes, and so on).
  if (err instanceof TypeError) return sendScimError(res, 400, "invalidValue", err.message);
  if (e.type === "entity.parse.failed") return sendScimError(res, 400, "invalidSyntax", "the body is not valid JSON");
  if (e.expose && e.status && e.status >= 400 && e.status < 500) return sendScimError(res, e.status, null, e.message ?? "bad request");
  log.error("SCIM request failed", { method: req.method, path: req.path, error: err as Error });
  sendScimError(res, 500, null, "internal error");
}
