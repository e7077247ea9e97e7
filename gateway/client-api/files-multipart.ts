// multipart/form-data read as a stream with busboy: the file part goes straight to disk (hashed on
// the way), never held whole in memory; other parts are small fields. Every limit broken and every
// malformed body is a MultipartError, which the route answers as a 400 (413 when too large).
import { createHash } from "node:crypto";
import fs from "node:fs";
import { pipeline } from "node:stream/promises";
import type { Readable } from "node:stream";
import busboy from "busboy";

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

/** A form field's value, at most; an upload's fields are short (`purpose`). */
export const MAX_FIELD_BYTES = 64 * 1024;
/** Fields besides the file; OpenAI's upload has one (`purpose`), clients may add a few. */
export const MAX_FIELDS = 16;
/**
 * What the OpenAPI document says of a form's other fields: at most MAX_FIELDS + the file, and names
 * with no control character but tab, CR and LF, which clients escape (busboy refuses the rest, as
 * RFC 7578's quoted names do).
 */
export const OTHER_FIELDS_META = { maxProperties: MAX_FIELDS + 1, propertyNames: { pattern: "^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]*$" } };

export const isMultipart = (contentType: string | undefined) => /^multipart\/form-data\s*;/i.test(contentType ?? "");

/**
 * Reads the body; the one file part is written to `tmpPath`. The caller removes `tmpPath` whatever
 * happens: it is created before the first byte, so a removal right after a failure leaves nothing.
 * On failure the body is left unread (the caller closes the connection).
 */
export async function receiveMultipart(body: Readable, contentType: string | undefined, tmpPath: string, maxBytes: number): Promise<{ fields: Record<string, string>; file: ReceivedFile | null }> {
  if (!isMultipart(contentType)) throw new MultipartError("the body is not multipart/form-data");
  let bb: busboy.Busboy;
  try {
    bb = busboy({
      headers: { "content-type": contentType },
      defParamCharset: "utf8", // clients send file names as UTF-8, not latin1
      // busboy calls a size limit reached at the limit itself, so one byte more: exactly the limit is fine.
      limits: { fileSize: maxBytes + 1, files: 1, fields: MAX_FIELDS, parts: MAX_FIELDS + 1, fieldSize: MAX_FIELD_BYTES + 1, fieldNameSize: 200, headerPairs: 20 },
    });
  } catch (err) {
    throw new MultipartError(`the multipart body cannot be read: ${(err as Error).message}`);
  }

  const fields: Record<string, string> = {};
  return new Promise((resolve, reject) => {
    let failed = false;
    let out: fs.WriteStream | null = null;
    let writing: Promise<ReceivedFile> | null = null;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      body.unpipe(bb);
      out?.destroy();
      reject(err);
    };
    bb.on("field", (name, value, info) => {
      if (info.nameTruncated) return fail(new MultipartError("a form field's name is too long"));
      if (info.valueTruncated) return fail(new MultipartError(`form field ${name} is longer than ${MAX_FIELD_BYTES} bytes`));
      fields[name] = value;
    });
    bb.on("file", (name, stream, info) => {
      // What busboy still holds unparsed after a failure is parsed, but opens no file: the caller
      // may already have removed it. (Destroying busboy from inside its own events breaks it.)
      if (failed) return void stream.resume();
      // Opened at once (not lazily as a stream opens it) so the caller's removal always finds it.
      const fd = fs.openSync(tmpPath, "w", 0o600);
      const file = fs.createWriteStream("", { fd });
      out = file;
      const hash = createHash("sha256");
      let bytes = 0;
      stream.on("limit", () => fail(new MultipartError(`the file is larger than ${maxBytes} bytes`, true)));
      const written: Promise<ReceivedFile> = pipeline(
        stream,
        async function* (src: AsyncIterable<Buffer>) {
          for await (const chunk of src) {
            hash.update(chunk);
            bytes += chunk.length;
            yield chunk;
          }
        },
        file,
      ).then(
        () => ({ field: name, filename: info.filename ?? "", path: tmpPath, bytes, sha256: hash.digest("hex") }),
        (err: NodeJS.ErrnoException) => {
          // A disk error stays what it is (a 500); the part's own stream failing is a broken body.
          throw err.syscall ? err : new MultipartError(`the multipart body is malformed: ${err.message}`);
        },
      );
      writing = written;
      written.catch(fail);
    });
    bb.on("filesLimit", () => fail(new MultipartError("only one file per upload")));
    bb.on("fieldsLimit", () => fail(new MultipartError(`at most ${MAX_FIELDS} form fields`)));
    bb.on("partsLimit", () => fail(new MultipartError(`at most ${MAX_FIELDS + 1} form parts`)));
    bb.on("error", (err: Error) => fail(new MultipartError(`the multipart body is malformed: ${err.message}`)));
    bb.on("close", () => {
      if (failed) return;
      if (!writing) return resolve({ fields, file: null });
      writing.then((file) => !failed && resolve({ fields, file }), fail);
    });
    body.on("error", fail);
    body.pipe(bb);
  });
}
