// /v1/files in OpenAI's shape: upload (multipart, streamed to <dataDir>/files, at most 64 MB),
// read, download, delete. A file is its project's alone: another project's id is "not found".
import fs from "node:fs";
import path from "node:path";
import express from "express";
import { z } from "zod";
import { BatchLineError, checkBatchFile } from "../../common/batch-lines.ts";
import type { File } from "../../common/db.ts";
import { ApiError } from "../errors.ts";
import { contentType, filePath, newFileId, ownedFile, type FilesDeps } from "../jobs/file-store.ts";
export { FILE_CONTENT_TYPES } from "../jobs/file-store.ts";
import type { Authed } from "./context.ts";
import { wrap } from "./express-util.ts";
import { MAX_FIELD_BYTES, MultipartError, OTHER_FIELDS_META, isMultipart, receiveMultipart } from "./files-multipart.ts";

export const MAX_FILE_BYTES = 64 * 1024 * 1024;
export const UPLOAD_PURPOSES = ["vision", "user_data", "batch"] as const;
/** The multipart form of an upload, for the OpenAPI document; `purpose` is checked with it too. */
export const uploadForm = z
  .object({
    file: z.file().describe("the file's bytes, at most 64 MB"),
    purpose: z.enum(UPLOAD_PURPOSES, { error: `one of: ${UPLOAD_PURPOSES.join(", ")}` }),
  })
  // Other fields are read and ignored, within the parser's limits (files-multipart.ts).
  .catchall(z.string().max(MAX_FIELD_BYTES))
  .meta(OTHER_FIELDS_META);

export function fileObject(f: File) {
  return { id: f.id, object: "file", bytes: Number(f.bytes), created_at: Math.floor(f.createdAt.getTime() / 1000), filename: f.filename, purpose: f.purpose, status: "processed" };
}

export function filesRoutes(deps: FilesDeps): express.Router {
  const r = express.Router();
  const find = async (req: Authed) => {
    const f = await ownedFile(deps.db, String(req.params.id), req.key!.projectId);
    if (!f) throw new ApiError("not_found", `no file '${String(req.params.id)}'`, { param: "file_id", code: "file_not_found" });
    return f;
  };

  r.post(
    "/files",
    wrap(async (req, res) => {
      if (!isMultipart(req.headers["content-type"])) throw new ApiError("invalid_request", "send the file as multipart/form-data with fields `file` and `purpose`", { param: "file" });
      const declared = Number(req.headers["content-length"] ?? 0);
      if (declared > MAX_FILE_BYTES + 64 * 1024) throw new ApiError("too_large", `a file may be at most ${MAX_FILE_BYTES} bytes`, { param: "file", code: "file_too_large" });
      const id = newFileId();
      const where = filePath(deps.dataDir, id);
      fs.mkdirSync(path.dirname(where.abs), { recursive: true });
      const tmp = `${where.abs}.upload`;
      try {
        const { fields, file } = await receiveMultipart(req, req.headers["content-type"], tmp, MAX_FILE_BYTES).catch((err: unknown) => {
          // The rest of the body is left unread: the answer goes out and the connection closes.
          res.setHeader("connection", "close");
          if (err instanceof MultipartError) throw new ApiError(err.tooLarge ? "too_large" : "invalid_request", err.message, { param: "file" });
          throw err;
        });
        if (!uploadForm.shape.purpose.safeParse(fields.purpose).success) {
          throw new ApiError("invalid_request", `purpose must be one of: ${UPLOAD_PURPOSES.join(", ")}`, { param: "purpose" });
        }
        if (!file) throw new ApiError("invalid_request", "no file part in the form", { param: "file" });
        // A batch's input is checked whole now, so a bad line is named before any batch runs.
        if (fields.purpose === "batch") await checkBatchUpload(tmp);
        fs.renameSync(tmp, where.abs);
        const row = await deps.db.file.create({
          data: { id, projectId: req.key!.projectId, purpose: fields.purpose!, filename: path.basename(file.filename) || "upload", bytes: BigInt(file.bytes), sha256: file.sha256, path: where.rel },
        });
        res.json(fileObject(row));
      } finally {
        fs.rmSync(tmp, { force: true });
      }
    }),
  );
  r.get(
    "/files",
    wrap(async (req, res) => {
      const rows = await deps.db.file.findMany({ where: { projectId: req.key!.projectId }, orderBy: { createdAt: "desc" }, take: 1000 });
      res.json({ object: "list", data: rows.map(fileObject), has_more: false });
    }),
  );
  r.get(
    "/files/:id",
    wrap(async (req, res) => void res.json(fileObject(await find(req)))),
  );
  r.get(
    "/files/:id/content",
    wrap(async (req, res) => {
      const f = await find(req);
      res.setHeader("content-type", contentType(f.filename));
      res.setHeader("content-length", String(f.bytes));
      await new Promise<void>((resolve, reject) => fs.createReadStream(path.join(deps.dataDir, f.path)).on("error", reject).pipe(res).on("finish", resolve));
    }),
  );
  r.delete(
    "/files/:id",
    wrap(async (req, res) => {
      const f = await find(req);
      await deps.db.file.delete({ where: { id: f.id } });
      fs.rmSync(path.join(deps.dataDir, f.path), { force: true });
      res.json({ id: f.id, object: "file", deleted: true });
    }),
  );
  return r;
}

async function checkBatchUpload(file: string): Promise<void> {
  try {
    await checkBatchFile(file);
  } catch (err) {
    if (err instanceof BatchLineError) throw new ApiError("invalid_request", `the batch file is not valid: ${err.message}`, { param: err.param, code: "invalid_batch_file" });
    throw err;
  }
}

