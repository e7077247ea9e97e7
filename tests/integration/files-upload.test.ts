// POST /v1/files (gateway/client-api/files.ts) over real HTTP on the real PostgreSQL: the official
// openai client's upload lands on disk with its sha256 in the row; a malformed or too-large body
// gets a 400/413 in OpenAI's error shape, the connection is closed on the unread rest, and nothing
// is left on disk or in the table.
import assert from "node:assert/strict";
import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import express, { type NextFunction, type Request, type Response } from "express";
import OpenAI, { toFile } from "openai";
import { loadConfig } from "../../common/config.ts";
import { closePrisma, prisma, type PrismaClient } from "../../common/db.ts";
import { migrate } from "../../common/migrate.ts";
import { answerError } from "../../gateway/client-api/errors.ts";
import { MAX_FILE_BYTES, filesRoutes } from "../../gateway/client-api/files.ts";
import type { KeyInfo } from "../../gateway/auth/key-cache.ts";

const projectId = `p-${randomUUID()}`;
let db: PrismaClient;
let dataDir: string;
let server: http.Server;
let base: string;

before(async () => {
  const url = loadConfig().databaseUrl;
  await migrate(url);
  db = prisma(url);
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-files-"));
  const app = express();
  // The key the real app's authentication would have found.
  app.use((req: Request & { key?: KeyInfo }, _res, next) => {
    req.key = { id: "k", projectId, teamId: "t", orgId: "o", models: [], band: "standard", expiresAt: null, revoked: false };
    next();
  });
  app.use("/v1", filesRoutes({ db, dataDir }));
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => answerError(req, res, err));
  server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.closeAllConnections();
  server.close();
  await db.file.deleteMany({ where: { projectId } });
  await closePrisma();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** Every file under the data dir (uploads and their `.upload` temporaries). */
const onDisk = (): string[] => (fs.existsSync(path.join(dataDir, "files")) ? (fs.readdirSync(path.join(dataDir, "files"), { recursive: true, withFileTypes: true }) as fs.Dirent[]).filter((d) => d.isFile()).map((d) => d.name) : []);
const rows = () => db.file.count({ where: { projectId } });

/** Sends `body` (or streams `chunks` of it, chunked, until answered) and reads the answer. */
function post(contentType: string, parts: Buffer[]): Promise<{ status: number; connection: string | undefined; body: { error: { message: string; type: string; param: string | null } } }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/v1/files`, { method: "POST", headers: { "content-type": contentType, "transfer-encoding": "chunked" } });
    let answered = false;
    req.on("response", (res) => {
      answered = true;
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => resolve({ status: res.statusCode!, connection: res.headers.connection, body: JSON.parse(text) as never }));
    });
    req.on("error", (err) => !answered && reject(err)); // a write after the server closed is expected
    void (async () => {
      for (const p of parts) {
        if (answered || req.destroyed) return;
        if (!req.write(p)) await new Promise((r) => req.once("drain", r));
      }
      req.end();
    })();
  });
}

const B = "----llmgw";
const CT = `multipart/form-data; boundary=${B}`;
const fileHead = Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
const purpose = Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nvision\r\n`);

describe("POST /v1/files", () => {
  it("stores what the openai client uploads, with its sha256", async () => {
    const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7) & 0xff));
    const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: "unused" });
    const f = await client.files.create({ file: await toFile(bytes, "picture.png"), purpose: "vision" as never });
    assert.equal(f.bytes, bytes.length);
    assert.equal(f.filename, "picture.png");
    const row = await db.file.findUniqueOrThrow({ where: { id: f.id } });
    assert.equal(row.sha256, createHash("sha256").update(bytes).digest("hex"));
    assert.deepEqual(fs.readFileSync(path.join(dataDir, row.path)), bytes);
    assert.deepEqual(onDisk(), [f.id]);
    await client.files.delete(f.id);
    assert.deepEqual(onDisk(), []);
  });

  it("answers malformed bodies with a 400 naming the fault, and keeps nothing", async () => {
    const cases: [string, string, Buffer[], RegExp][] = [
      ["not multipart", "application/json", [Buffer.from("{}")], /multipart\/form-data/],
      ["no boundary", "multipart/form-data; charset=utf-8", [Buffer.from("x")], /cannot be read/],
      ["cut inside the file", CT, [fileHead, Buffer.alloc(5000, 1)], /malformed/],
      ["no closing boundary", CT, [purpose, fileHead, Buffer.alloc(10), Buffer.from("\r\n")], /malformed/],
      ["two files", CT, [fileHead, Buffer.alloc(10), Buffer.from("\r\n"), fileHead, Buffer.alloc(10), Buffer.from(`\r\n--${B}--\r\n`)], /only one file/],
      ["no file", CT, [purpose, Buffer.from(`--${B}--\r\n`)], /no file part/],
      ["a bad purpose", CT, [Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nfine-tune\r\n`), fileHead, Buffer.alloc(10), Buffer.from(`\r\n--${B}--\r\n`)], /purpose must be one of/],
      // A batch's input is checked line by line before it is kept (tests/e2e/batches.test.ts has the rest).
      ["a batch file that is not JSONL", CT, [Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n`), fileHead, Buffer.alloc(10, 0x41), Buffer.from(`\r\n--${B}--\r\n`)], /line 1: is not valid JSON/],
    ];
    for (const [what, ct, parts, re] of cases) {
      const r = await post(ct, parts);
      assert.equal(r.status, 400, what);
      assert.equal(r.body.error.type, "invalid_request_error", what);
      assert.match(r.body.error.message, re, what);
      assert.deepEqual(onDisk(), [], what);
    }
    assert.equal(await rows(), 0);
  });

  it("refuses a streamed file past 64 MB with a 413 before reading the rest, and keeps nothing", async () => {
    const mb = Buffer.alloc(1024 * 1024, 3);
    // 200 MB offered; the answer comes once 64 MB have been read, and the connection closes on the rest.
    const r = await post(CT, [purpose, fileHead, ...Array.from({ length: 200 }, () => mb)]);
    assert.equal(r.status, 413);
    assert.match(r.body.error.message, new RegExp(`larger than ${MAX_FILE_BYTES} bytes`));
    assert.equal(r.body.error.param, "file");
    assert.equal(r.connection, "close");
    assert.deepEqual(onDisk(), []);
    assert.equal(await rows(), 0);
  });
});
