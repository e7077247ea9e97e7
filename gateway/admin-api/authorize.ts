// Checks the principal's roles against gateway/admin-api/roles.ts for the operation a request
// matches, found by Express's own matcher over the same operations the OpenAPI document lists.
// A request matching several operations (a wildcard and a longer path) must be allowed all of them.
import express, { type NextFunction, type Request, type Response } from "express";
import type { Operation } from "../http/openapi-build.ts";
import { AdminError } from "./errors.ts";
import { principalOf } from "./principal.ts";
import { allowed, operationKey, rolesNeeded } from "./roles.ts";

type Matched = Request & { matchedOperations?: string[] };

export function authorize(operations: Operation[]): express.Router {
  const r = express.Router();
  for (const op of operations) {
    if (op.auth === false) continue;
    const key = operationKey(op.method, op.path);
    r[op.method](op.path, (req: Matched, _res: Response, next: NextFunction) => {
      (req.matchedOperations ??= []).push(key);
      next();
    });
  }
  r.use((req: Matched, _res, next) => {
    const keys = req.matchedOperations;
    // No operation: the 404 (or the 405 before it) answers.
    if (!keys?.length) return next();
    const p = principalOf(req);
    const denied = keys.find((k) => !allowed(k, p.roles, p.kind === "person"));
    if (!denied) return next();
    const held = p.kind === "admin-token" ? "the admin token" : p.roles.size ? `your roles (${[...p.roles].join(", ")})` : "you (no roles)";
    next(new AdminError(403, `${denied} needs ${rolesNeeded(denied)}; ${held} may not`));
  });
  return r;
}
