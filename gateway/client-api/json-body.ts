// Reads a JSON request body for the hot path. It does what express.json does for us — JSON
// content types only (a multipart upload passes untouched), a size limit, errors of the same
// kinds — with a fraction of its cost per request, which the overhead benchmark measures
// (tests/bench/overhead.ts, docs/benchmarks.md).
import type { IncomingMessage } from "node:http";
import type { NextFunction, Request, Response } from "express";

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** An error shaped like body-parser's, so the error handler treats both alike. */
function bodyError(type: "entity.too.large" | "entity.parse.failed", status: number, message: string): Error {
  return Object.assign(new Error(message), { type, status, expose: true });
}

/**
 * Calls `done` once with the parsed body and its bytes as they came, `undefined` when the request
 * carries no JSON (GET, HEAD, another content type: left unread for whoever handles it), or
 * body-parser's kind of error.
 */
export function readJsonBody(req: IncomingMessage, limitBytes: number, done: (err: Error | null, body?: unknown, raw?: Buffer) => void): void {
  const ctype = req.headers["content-type"];
  if (req.method === "GET" || req.method === "HEAD" || !ctype || !JSON_TYPE.test(ctype)) return done(null, undefined);
  const declared = Number(req.headers["content-length"]);
  if (declared > limitBytes) return done(bodyError("entity.too.large", 413, "request entity too large"));
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (err: Error | null, body?: unknown, raw?: Buffer) => {
    if (finished) return;
    finished = true;
    req.off("data", onData);
    req.off("end", onEnd);
    req.off("error", onError);
    done(err, body, raw);
  };
  const onData = (c: Buffer) => {
    size += c.length;
    if (size > limitBytes) {
      req.resume(); // read and drop the rest, so the connection can answer
      return finish(bodyError("entity.too.large", 413, "request entity too large"));
    }
    chunks.push(c);
  };
  const onEnd = () => {
    const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
    const text = raw.toString("utf8");
    // Like express.json's strict mode: a body is an object or an array, never a bare value.
    const first = /\S/.exec(text)?.[0];
    if (first !== undefined && first !== "{" && first !== "[") {
      return finish(bodyError("entity.parse.failed", 400, `a JSON object is expected, not ${JSON.stringify(text.trim().slice(0, 20))}`));
    }
    let body: unknown;
    try {
      body = first ? JSON.parse(text) : {};
    } catch (err) {
      return finish(bodyError("entity.parse.failed", 400, (err as Error).message));
    }
    finish(null, body, raw);
  };
  const onError = (err: Error) => finish(err);
  req.on("data", onData);
  req.on("end", onEnd);
  req.on("error", onError);
}

/** The same as express middleware: sets `req.body` (and `req.rawBody`) when there is a JSON body. */
export function jsonBody(limitBytes: number) {
  return (req: Request, _res: Response, next: NextFunction): void =>
    readJsonBody(req, limitBytes, (err, body, raw) => {
      if (err) return next(err);
      if (body !== undefined) Object.assign(req, { body, rawBody: raw });
      next();
    });
}
