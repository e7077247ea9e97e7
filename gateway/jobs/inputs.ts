// The inputs a catalog workflow declares, and a request's inputs checked against them before any
// job exists: each problem is a 400 naming the input (`inputs.<name>`).
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { PrismaClient } from "../../common/db.ts";
import { ApiError } from "../errors.ts";
import { ownedFile } from "./file-store.ts";
import type { JobFileInput } from "../../workflows/job-types.ts";

export const FILE_KINDS = ["image", "mask", "audio", "video", "file"] as const;
export const INPUT_KINDS = ["text", "int", "float", "bool", "choice", ...FILE_KINDS] as const;

export const inputDecl = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9_]{1,64}$/),
  kind: z.enum(INPUT_KINDS),
  description: z.string().optional(),
  required: z.boolean().optional(),
  default: z.union([z.string(), z.number(), z.boolean()]).optional(),
  min: z.number().optional(),
  max: z.number().optional(),
  max_length: z.number().int().positive().optional(),
  choices: z.array(z.string()).min(1).optional(),
});
export type InputDecl = z.infer<typeof inputDecl>;
export const inputDecls = z.array(inputDecl);

/** What the first bytes say a file is (by magic number), for the kinds an input accepts. */
export function sniffKind(head: Buffer): "image" | "audio" | "video" | null {
  const hex = head.subarray(0, 12).toString("hex");
  const ascii = head.subarray(0, 12).toString("latin1");
  if (hex.startsWith("89504e47") || hex.startsWith("ffd8ff") || ascii.startsWith("GIF8") || (ascii.startsWith("RIFF") && ascii.slice(8, 12) === "WEBP")) return "image";
  if ((ascii.startsWith("RIFF") && ascii.slice(8, 12) === "WAVE") || ascii.startsWith("ID3") || ascii.startsWith("fLaC") || ascii.startsWith("OggS") || /^fff[23ab]/.test(hex)) return "audio";
  if (ascii.slice(4, 8) === "ftyp" || hex.startsWith("1a45dfa3")) return "video";
  return null;
}

export function readHead(file: string): Buffer {
  const fd = fs.openSync(file, "r");
  try {
    const b = Buffer.alloc(16);
    const n = fs.readSync(fd, b, 0, 16, 0);
    return b.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}

const bad = (name: string, message: string) => new ApiError("invalid_request", `inputs.${name}: ${message}`, { param: `inputs.${name}`, code: "invalid_input" });

/** The request's inputs as placeholder values and files, or a 400 for the first problem. */
export async function checkInputs(
  decls: InputDecl[],
  given: unknown,
  ctx: { db: PrismaClient; dataDir: string; projectId: string },
): Promise<{ values: Record<string, string | number | boolean>; files: JobFileInput[] }> {
  if (given === undefined) given = {};
  if (!given || typeof given !== "object" || Array.isArray(given)) throw new ApiError("invalid_request", "inputs must be an object", { param: "inputs" });
  const inputs = given as Record<string, unknown>;
  const known = new Map(decls.map((d) => [d.name, d]));
  for (const k of Object.keys(inputs)) if (!known.has(k)) throw bad(k, `unknown input; this workflow takes: ${decls.map((d) => d.name).join(", ")}`);
  const values: Record<string, string | number | boolean> = {};
  const files: JobFileInput[] = [];
  for (const d of decls) {
    const v = inputs[d.name] ?? d.default;
    if (v === undefined || v === null) {
      if (d.required === false) continue;
      throw bad(d.name, `required (${d.kind})`);
    }
    switch (d.kind) {
      case "text":
        if (typeof v !== "string") throw bad(d.name, "must be a string");
        if (d.max_length !== undefined && v.length > d.max_length) throw bad(d.name, `at most ${d.max_length} characters`);
        values[d.name] = v;
        break;
      case "int":
      case "float":
        if (typeof v !== "number" || !Number.isFinite(v)) throw bad(d.name, `must be a number (${d.kind})`);
        if (d.kind === "int" && !Number.isInteger(v)) throw bad(d.name, "must be an integer");
        if (d.min !== undefined && v < d.min) throw bad(d.name, `at least ${d.min}`);
        if (d.max !== undefined && v > d.max) throw bad(d.name, `at most ${d.max}`);
        values[d.name] = v;
        break;
      case "bool":
        if (typeof v !== "boolean") throw bad(d.name, "must be true or false");
        values[d.name] = v;
        break;
      case "choice":
        if (typeof v !== "string" || !d.choices?.includes(v)) throw bad(d.name, `one of: ${(d.choices ?? []).join(", ")}`);
        values[d.name] = v;
        break;
      default: {
        if (typeof v !== "string" || !v.startsWith("file-")) throw bad(d.name, "must be a file id (upload it to /v1/files first)");
        const f = await ownedFile(ctx.db, v, ctx.projectId);
        if (!f) throw bad(d.name, `no file '${v}' of yours`);
        if (d.kind !== "file") {
          const want = d.kind === "mask" ? "image" : d.kind;
          const is = sniffKind(readHead(path.join(ctx.dataDir, f.path)));
          if (is !== want) throw bad(d.name, `file ${v} is ${is ? `a ${is}` : "not a recognised media file"}, not ${d.kind === "mask" ? "an image (mask)" : `a ${want}`}`);
        }
        files.push({ placeholder: d.name, fileId: v });
      }
    }
  }
  return { values, files };
}
