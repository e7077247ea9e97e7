// Files of a project as the store and the data directory keep them: where one lives, a new id,
// which project owns it, and bytes the gateway already holds stored as a file. The /v1/files
// routes (client-api/files.ts), job inputs (./inputs.ts) and training data share it.
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { File, PrismaClient } from "../../common/db.ts";
import { fileRelPath } from "../../workflows/job-types.ts";

export interface FilesDeps {
  db: PrismaClient;
  dataDir: string;
}

export const filePath = (dataDir: string, id: string) => ({ abs: path.join(dataDir, fileRelPath(id)), rel: fileRelPath(id) });

export const newFileId = () => `file-${randomBytes(12).toString("hex")}`;

/** The project's file, or null (another project's file is as good as absent). */
export async function ownedFile(db: PrismaClient, id: string, projectId: string): Promise<File | null> {
  const f = await db.file.findUnique({ where: { id } });
  return f && f.projectId === projectId ? f : null;
}

/** Stores bytes the gateway already holds (a picture sent inline as base64) as the project's file. */
export async function storeBytes(deps: FilesDeps, projectId: string, purpose: string, filename: string, bytes: Buffer): Promise<File> {
  const id = newFileId();
  const where = filePath(deps.dataDir, id);
  fs.mkdirSync(path.dirname(where.abs), { recursive: true });
  fs.writeFileSync(where.abs, bytes, { mode: 0o600 });
  return deps.db.file.create({ data: { id, projectId, purpose, filename, bytes: BigInt(bytes.length), sha256: createHash("sha256").update(bytes).digest("hex"), path: where.rel } });
}

/** A download's type by its name's extension; any other is application/octet-stream. */
export const FILE_CONTENT_TYPES: Record<string, string> = { ".jsonl": "application/jsonl", ".png": "image/png", ".glb": "model/gltf-binary", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp" };

export function contentType(name: string): string {
  return FILE_CONTENT_TYPES[path.extname(name).toLowerCase()] ?? "application/octet-stream";
}
