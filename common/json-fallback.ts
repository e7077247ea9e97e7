// The last handlers of a plain Express app (metrics, an engine stand-in): a path no route serves and
// a failure no route caught answer JSON, never the HTML pages of Express's final handler.
import type express from "express";
import type { NextFunction, Request, Response } from "express";

export function jsonFallbacks(app: express.Express): void {
  app.use((req: Request, res: Response) => void res.status(404).json({ error: { message: `no route ${req.method} ${req.path}`, type: "not_found_error" } }));
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return void res.end();
    const e = err as { status?: number; expose?: boolean; message?: string };
    // body-parser's own refusals (bad JSON, too large) say what was wrong; anything else says nothing.
    const status = e?.expose && e.status && e.status >= 400 && e.status < 500 ? e.status : 500;
    res.status(status).json({ error: { message: status === 500 ? "internal error" : (e.message ?? "bad request"), type: status === 500 ? "server_error" : "invalid_request_error" } });
  });
}
