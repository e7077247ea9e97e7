// A method a documented path does not declare is a 405 with an Allow header (RFC 9110 §15.5.6), not
// the 404 Express gives when no route matches: built from the same operations as the OpenAPI
// document, so the two cannot disagree. Express's own matcher decides which paths match, as it does
// for the routes themselves; a request matching several documented paths (a wildcard and a longer
// path) is allowed the methods of all of them.
import express, { type NextFunction, type Request, type Response } from "express";
import type { Operation } from "./openapi-build.ts";

type Guarded = Request & { allowedMethods?: { served: boolean; methods: Set<string> } };

/** `refuse` answers the 405 in the API's own error shape; the Allow header is already set. */
export function methodGuard(operations: Operation[], refuse: (req: Request, res: Response, next: NextFunction) => void): express.Router {
  const byPath = new Map<string, Set<string>>();
  for (const op of operations) {
    const methods = byPath.get(op.path) ?? new Set<string>();
    methods.add(op.method.toUpperCase());
    // Express answers HEAD with the GET handler.
    if (op.method === "get") methods.add("HEAD");
    byPath.set(op.path, methods);
  }
  const r = express.Router();
  for (const [path, methods] of byPath) {
    r.all(path, (req: Guarded, _res, next) => {
      const seen = (req.allowedMethods ??= { served: false, methods: new Set() });
      for (const m of methods) seen.methods.add(m);
      if (methods.has(req.method)) seen.served = true;
      next();
    });
  }
  r.use((req: Guarded, res, next) => {
    const seen = req.allowedMethods;
    if (!seen || seen.served) return next();
    res.setHeader("allow", [...seen.methods].join(", "));
    // OPTIONS asks what the path allows: the header is the answer.
    if (req.method === "OPTIONS") return void res.status(204).end();
    refuse(req, res, next);
  });
  return r;
}
