// The upload's multipart reader (gateway/client-api/files-multipart.ts, busboy underneath): the file
// part streams to disk whatever the chunking, hashed on the way; fields are kept; every limit broken
// and every malformed body is a MultipartError, a too-large file one marked tooLarge.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { describe, it } from "node:test";
import { MAX_FIELDS, MultipartError, receiveMultipart } from "../../gateway/client-api/files-multipart.ts";

const CT = "multipart/form-data; boundary=XYZ";
const filePart = (bytes: Buffer, name = "a.bin") => Buffer.concat([Buffer.from(`--XYZ\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\n\r\n`), bytes, Buffer.from("\r\n")]);
const field = (name: string, value: string) => Buffer.from(`--XYZ\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
const END = Buffer.from("--XYZ--\r\n");
const tmpFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "mp-")), "f");
const chunked = (body: Buffer, size: number) => {
  const chunks = [];
  for (let i = 0; i < body.length; i += size) chunks.push(body.subarray(i, i + size));
  return Readable.from(chunks);
};
const refused = (re: RegExp, tooLarge = false) => (err: unknown) => err instanceof MultipartError && re.test(err.message) && err.tooLarge === tooLarge;

describe("multipart upload reader", () => {
  it("streams the file to disk whatever the chunking, with its sha256, and keeps the fields", async () => {
    const file = Buffer.alloc(200_000, 7);
    file.write("\r\n--XY", 1000); // the start of a boundary, not one
    const body = Buffer.concat([filePart(file, "pïc.png"), field("purpose", "vision"), END]);
    for (const size of [7, 997, body.length]) {
      const tmp = tmpFile();
      const r = await receiveMultipart(chunked(body, size), CT, tmp, 1 << 20);
      assert.deepEqual(r.fields, { purpose: "vision" });
      assert.deepEqual(fs.readFileSync(tmp), file);
      assert.deepEqual(r.file, { field: "file", filename: "pïc.png", path: tmp, bytes: file.length, sha256: createHash("sha256").update(file).digest("hex") });
    }
  });

  it("answers a form without a file with its fields and no file", async () => {
    const r = await receiveMultipart(Readable.from([Buffer.concat([field("purpose", "vision"), END])]), CT, tmpFile(), 100);
    assert.deepEqual(r, { fields: { purpose: "vision" }, file: null });
  });

  it("refuses a file over the limit as too large", async () => {
    const body = Buffer.concat([filePart(Buffer.alloc(1001, 1)), END]);
    await assert.rejects(receiveMultipart(chunked(body, 100), CT, tmpFile(), 1000), refused(/larger than 1000 bytes/, true));
    // Exactly at the limit is fine (busboy alone would call it truncated).
    const ok = await receiveMultipart(Readable.from([Buffer.concat([filePart(Buffer.alloc(1000, 1)), END])]), CT, tmpFile(), 1000);
    assert.equal(ok.file!.bytes, 1000);
  });

  it("opens no file for a part that follows a failure in the same chunk", async () => {
    const tmp = tmpFile();
    const body = Buffer.concat([field("purpose", "v".repeat(65 * 1024)), filePart(Buffer.alloc(10, 1)), END]);
    await assert.rejects(receiveMultipart(Readable.from([body]), CT, tmp, 1 << 20), refused(/longer than 65536 bytes/));
    await new Promise((r) => setImmediate(r));
    assert.equal(fs.existsSync(tmp), false, "the file part after the failure was not written");
  });

  it("refuses malformed bodies and broken limits with a clear message", async () => {
    const cases: [string, string | undefined, Buffer, RegExp][] = [
      ["not multipart", "application/json", Buffer.from("{}"), /not multipart\/form-data/],
      ["no boundary", "multipart/form-data; charset=utf-8", END, /cannot be read/],
      ["ended early, inside the file", CT, filePart(Buffer.alloc(10)).subarray(0, 80), /malformed/],
      ["no closing boundary", CT, field("purpose", "vision"), /malformed/],
      ["no parts at all", CT, Buffer.from("just some bytes"), /malformed/],
      ["two files", CT, Buffer.concat([filePart(Buffer.alloc(3)), filePart(Buffer.alloc(3), "b.bin"), END]), /only one file/],
      ["a long field", CT, Buffer.concat([field("purpose", "v".repeat(65 * 1024)), END]), /longer than 65536 bytes/],
      ["many fields", CT, Buffer.concat([...Array.from({ length: MAX_FIELDS + 1 }, (_, i) => field(`f${i}`, "x")), END]), /at most 16 form fields/],
      ["a part without headers' end", CT, Buffer.from(`--XYZ\r\nContent-Disposition: form-data; name="a"${"x".repeat(20_000)}`), /malformed/],
    ];
    for (const [what, ct, body, re] of cases) {
      await assert.rejects(receiveMultipart(chunked(body, 64), ct, tmpFile(), 1 << 20), refused(re), what);
    }
  });
});
