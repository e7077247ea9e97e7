// Reads a JSON request body for the hot path. It does what express.json does for us — JSON
// content types only (a multipart upload passes untouched), a size limit, errors of the same
// kinds — with a fraction of its cost per request, which the overhead benchmark measures
// (tests/bench/overhead.ts, docs/benchmarks.md).
import type { NextFunction, Request, Response } from "express";

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** An error shaped like body-parser's, so the error handler treats both alike. */
function bodyError(type: "entity.too.large" | "entity.parse.failed", status: number, message: string): Error {
  return Object.assign(new Error(message), { type, status, expose: true });
}

export function jsonBody(limitBytes: number) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const ctype = req.headers["content-type"];
    if (req.method === "GET" || req.method === "HEAD" || !ctype || !JSON_TYPE.test(ctype)) return next();
    const declared = Number(req.headers["content-length"]);
    if (declared > limitBytes) return next(bodyError("entity.too.large", 413, "request entity too large"));
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      next(err);
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
      const text = chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks, size).toString("utf8");
      // Like express.json's strict mode: a body is an object or an array, never a bare value.
      const first = /\S/.exec(text)?.[0];
      if (first !== undefined && first !== "{" && first !== "[") {
        return finish(bodyError("entity.parse.failed", 400, `a JSON object is expected, not ${JSON.stringify(text.trim().slice(0, 20))}`));
      }
      try {
        (req as Request & { body: unknown }).body = first ? JSON.parse(text) : {};
      } catch (err) {
        return finish(bodyError("entity.parse.failed", 400, (err as Error).message));
      }
      finish();
    };
    const onError = (err: Error) => finish(err);
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  };
}
