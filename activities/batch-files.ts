// A finished batch's output and error files, in OpenAI's shape, one JSON line per request:
//   {"id": "batch_req_…", "custom_id": "…", "response": {"status_code", "request_id", "body"}, "error": null}
// Answered 2xx lines go to the output file, the others to the error file, and so do lines that
// never ran (cancelled, expired), with `response: null` and `error: {code, message}`. Written from
// the kept answers, in input order; the file ids follow from the batch's, so a retry rewrites the
// same files rather than leaving strays.
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Batch } from "../common/db.ts";
import { readBatchLines } from "../common/batch-lines.ts";
import { config } from "../common/config.ts";
import type { ActivityDeps } from "./deps.ts";
import type { BatchEnding } from "../workflows/batch-types.ts";
import { fileRelPath } from "../workflows/job-types.ts";

const PAGE = 1000;

const NOT_RUN: Record<BatchEnding, { code: string; message: string }> = {
  cancelled: { code: "batch_cancelled", message: "This request was not executed: the batch was cancelled." },
  expired: { code: "batch_expired", message: "This request could not be executed before the completion window expired." },
  failed: { code: "batch_failed", message: "This request was not executed: the batch failed." },
  completed: { code: "batch_failed", message: "This request was not executed." },
};

const fileIdOf = (batchId: string, kind: string) => `file-${createHash("sha256").update(`${batchId}/${kind}`).digest("hex").slice(0, 24)}`;

class JsonlFile {
  readonly id: string;
  private readonly abs: string;
  private readonly rel: string;
  private out: fs.WriteStream | null = null;
  private hash = createHash("sha256");
  bytes = 0;
  lines = 0;

  constructor(batchId: string, kind: string) {
    this.id = fileIdOf(batchId, kind);
    this.rel = fileRelPath(this.id);
    this.abs = path.join(config().dataDir, this.rel);
  }

  async write(line: string): Promise<void> {
    if (!this.out) {
      fs.mkdirSync(path.dirname(this.abs), { recursive: true });
      this.out = fs.createWriteStream(`${this.abs}.part`, { mode: 0o600 });
    }
    const b = Buffer.from(`${line}\n`);
    this.hash.update(b);
    this.bytes += b.length;
    this.lines++;
    if (!this.out.write(b)) await new Promise<void>((r) => this.out!.once("drain", r));
  }

  /** The file's store row (made or replaced), or null when no line was written. */
  async close(deps: ActivityDeps, batch: Batch, filename: string): Promise<string | null> {
    if (!this.out) return null;
    const out = this.out;
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
    fs.renameSync(`${this.abs}.part`, this.abs);
    const row = { projectId: batch.projectId, purpose: "batch_output", filename, bytes: BigInt(this.bytes), sha256: this.hash.digest("hex"), path: this.rel };
    await deps.db.file.upsert({ where: { id: this.id }, create: { id: this.id, ...row }, update: row });
    return this.id;
  }
}

const answered = (r: { customId: string; statusCode: number; body: string; requestId: string | null }, lineId: string) =>
  `{"id":${JSON.stringify(lineId)},"custom_id":${JSON.stringify(r.customId)},"response":{"status_code":${r.statusCode},"request_id":${JSON.stringify(r.requestId ?? lineId)},"body":${r.body}},"error":null}`;

export async function writeBatchFiles(deps: ActivityDeps, batch: Batch, inputFile: string | null, ending: BatchEnding): Promise<{ outputFileId: string | null; errorFileId: string | null }> {
  const output = new JsonlFile(batch.id, "output");
  const errors = new JsonlFile(batch.id, "errors");
  const kept = new Set<string>();
  for (let skip = 0; ; skip += PAGE) {
    const rows = await deps.db.batchResult.findMany({ where: { batchId: batch.id }, orderBy: { line: "asc" }, skip, take: PAGE });
    for (const r of rows) {
      kept.add(r.customId);
      const ok = r.statusCode >= 200 && r.statusCode < 300;
      await (ok ? output : errors).write(answered(r, lineRequestId(batch.id, r.customId)));
    }
    if (rows.length < PAGE) break;
  }
  if (inputFile) {
    const why = NOT_RUN[ending];
    for await (const l of readBatchLines(inputFile)) {
      if (kept.has(l.customId)) continue;
      await errors.write(JSON.stringify({ id: lineRequestId(batch.id, l.customId), custom_id: l.customId, response: null, error: why }));
    }
  }
  return {
    outputFileId: await output.close(deps, batch, `${batch.id}_output.jsonl`),
    errorFileId: await errors.close(deps, batch, `${batch.id}_error.jsonl`),
  };
}

/** A line's request id: the same on every try (the gateway's logs join them up) and its id in the files. */
export function lineRequestId(batchId: string, customId: string): string {
  return `batch_req_${createHash("sha256").update(`${batchId}\0${customId}`).digest("hex").slice(0, 32)}`;
}
