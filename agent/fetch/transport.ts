// Reading a source from a byte offset: an http(s) URL with a Range request, or a file on a mounted
// mirror. The caller appends what comes to its .part file, so a cut connection loses nothing.
import fs from "node:fs";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import { FetchError } from "./errors.ts";

export interface Opened {
  /** Where `body` starts: the asked offset, or 0 when the source cannot resume. */
  offset: number;
  /** Size of the whole file, when the source says. */
  total: number | null;
  body: AsyncIterable<Uint8Array>;
  /** Stops reading (the connection is closed). */
  cancel(): void;
}

export function isHttpUrl(source: string): boolean {
  return /^https?:\/\//i.test(source);
}

const CONTENT_RANGE = /^bytes (\d+)-\d+\/(\d+|\*)$/;
const UNSATISFIED_RANGE = /^bytes \*\/(\d+)$/;

const empty: AsyncIterable<Uint8Array> = { async *[Symbol.asyncIterator]() {} };

async function openHttp(url: string, offset: number): Promise<Opened> {
  const ac = new AbortController();
  let res: Response;
  try {
    res = await fetch(url, { headers: offset > 0 ? { range: `bytes=${offset}-` } : {}, redirect: "follow", signal: ac.signal });
  } catch (err) {
    throw new FetchError(grpc.status.UNAVAILABLE, `${url}: ${(err as Error).message}`);
  }
  const cancel = () => ac.abort();
  if (res.status === 416) {
    await res.body?.cancel();
    // The .part already holds the whole file when its size is the file's size.
    const m = UNSATISFIED_RANGE.exec(res.headers.get("content-range") ?? "");
    if (m && Number(m[1]) === offset) return { offset, total: offset, body: empty, cancel };
    return openHttp(url, 0);
  }
  if (res.status !== 200 && res.status !== 206) {
    await res.body?.cancel();
    const code = res.status === 404 ? grpc.status.NOT_FOUND : res.status < 500 ? grpc.status.FAILED_PRECONDITION : grpc.status.UNAVAILABLE;
    throw new FetchError(code, `${url}: HTTP ${res.status}`);
  }
  if (!res.body) throw new FetchError(grpc.status.UNAVAILABLE, `${url}: no body`);
  const body = Readable.fromWeb(res.body as import("node:stream/web").ReadableStream<Uint8Array>);
  if (res.status === 206) {
    const m = CONTENT_RANGE.exec(res.headers.get("content-range") ?? "");
    if (!m || Number(m[1]) !== offset) {
      body.destroy();
      return openHttp(url, 0); // a range we did not ask for: start over rather than guess
    }
    return { offset, total: m[2] === "*" ? null : Number(m[2]), body, cancel };
  }
  const len = res.headers.get("content-length");
  return { offset: 0, total: len === null ? null : Number(len), body, cancel };
}

function openFile(p: string, offset: number): Opened {
  let size: number;
  try {
    size = fs.statSync(p).size;
  } catch {
    throw new FetchError(grpc.status.NOT_FOUND, `${p} does not exist on this node`);
  }
  const start = offset <= size ? offset : 0;
  const body = fs.createReadStream(p, { start });
  return { offset: start, total: size, body, cancel: () => body.destroy() };
}

export function openAt(source: string, offset: number): Promise<Opened> {
  if (isHttpUrl(source)) return openHttp(source, offset);
  return Promise.resolve(openFile(source.startsWith("file://") ? fileURLToPath(source) : source, offset));
}

/** The whole of a small source (a manifest), refused past `maxBytes`. */
export async function readSmall(source: string, maxBytes: number): Promise<Buffer> {
  const o = await openAt(source, 0);
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of o.body) {
    n += c.length;
    if (n > maxBytes) {
      o.cancel();
      throw new FetchError(grpc.status.INVALID_ARGUMENT, `${source} is larger than ${maxBytes} bytes`);
    }
    chunks.push(Buffer.from(c));
  }
  return Buffer.concat(chunks);
}
