// multipart/form-data read as a stream: the file part goes straight to disk (hashed on the way),
// never held whole in memory; other parts are small fields. Written here because no multipart
// parser is among the dependencies.
import { createHash } from "node:crypto";
import fs from "node:fs";
import { once } from "node:events";
import type { Readable } from "node:stream";

export interface ReceivedFile {
  field: string;
  filename: string;
  path: string;
  bytes: number;
  sha256: string;
}

export class MultipartError extends Error {
  constructor(
    message: string,
    readonly tooLarge = false,
  ) {
    super(message);
  }
}

const MAX_FIELD = 64 * 1024;

export function boundaryOf(contentType: string | undefined): string | null {
  const m = /^multipart\/form-data\s*;.*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? "");
  return m ? (m[1] ?? m[2]!) : null;
}

/** Reads the body; the first file part is written to `tmpPath`. The caller removes it on error. */
export async function receiveMultipart(body: Readable, boundary: string, tmpPath: string, maxBytes: number): Promise<{ fields: Record<string, string>; file: ReceivedFile | null }> {
  const delim = Buffer.from(`\r\n--${boundary}`);
  const fields: Record<string, string> = {};
  let file: ReceivedFile | null = null;
  let state = "preamble" as "preamble" | "after" | "headers" | "body" | "end";
  let buf: Buffer = Buffer.from("\r\n");
  let part: { name: string; filename: string | null; chunks: Buffer[]; size: number; out?: fs.WriteStream; hash?: ReturnType<typeof createHash> } | null = null;

  const write = async (data: Buffer) => {
    if (!part || !data.length) return;
    part.size += data.length;
    if (part.out) {
      if (part.size > maxBytes) throw new MultipartError(`the file is larger than ${maxBytes} bytes`, true);
      part.hash!.update(data);
      if (!part.out.write(data)) await once(part.out, "drain");
    } else {
      if (part.size > MAX_FIELD) throw new MultipartError(`form field ${part.name} is too long`);
      part.chunks.push(data);
    }
  };
  const finish = async () => {
    if (!part) return;
    if (part.out) {
      part.out.end();
      await once(part.out, "close");
      file = { field: part.name, filename: part.filename!, path: tmpPath, bytes: part.size, sha256: part.hash!.digest("hex") };
    } else fields[part.name] = Buffer.concat(part.chunks).toString("utf8");
    part = null;
  };

  const step = async (): Promise<boolean> => {
    if (state === "preamble") {
      const i = buf.indexOf(delim);
      if (i < 0) return false;
      buf = buf.subarray(i + delim.length);
      state = "after";
    } else if (state === "after") {
      if (buf.length < 2) return false;
      if (buf[0] === 0x2d && buf[1] === 0x2d) state = "end";
      else {
        buf = buf.subarray(2);
        state = "headers";
      }
    } else if (state === "headers") {
      const i = buf.indexOf("\r\n\r\n");
      if (i < 0) {
        if (buf.length > MAX_FIELD) throw new MultipartError("part headers too long");
        return false;
      }
      const head = buf.subarray(0, i).toString("utf8");
      buf = buf.subarray(i + 4);
      const disp = /content-disposition:[^\r\n]*/i.exec(head)?.[0] ?? "";
      const name = /\bname="([^"]*)"/i.exec(disp)?.[1] ?? "";
      const filename = /\bfilename="([^"]*)"/i.exec(disp)?.[1] ?? null;
      part = { name, filename, chunks: [], size: 0 };
      if (filename !== null && !file) {
        part.out = fs.createWriteStream(tmpPath, { mode: 0o600 });
        part.hash = createHash("sha256");
      } else if (filename !== null) throw new MultipartError("only one file per upload");
      state = "body";
    } else if (state === "body") {
      const i = buf.indexOf(delim);
      if (i < 0) {
        const safe = buf.length - (delim.length - 1);
        if (safe > 0) {
          await write(buf.subarray(0, safe));
          buf = buf.subarray(safe);
        }
        return false;
      }
      await write(buf.subarray(0, i));
      await finish();
      buf = buf.subarray(i + delim.length);
      state = "after";
    } else return false;
    return true;
  };

  try {
    for await (const chunk of body) {
      buf = buf.length ? Buffer.concat([buf, chunk as Buffer]) : (chunk as Buffer);
      while (await step());
      if ((state as string) === "end") break;
    }
  } finally {
    const p = part as { out?: fs.WriteStream } | null;
    p?.out?.destroy();
  }
  if ((state as string) !== "end") throw new MultipartError("the multipart body ended early");
  return { fields, file };
}
