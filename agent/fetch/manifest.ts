// The manifest of a mirror set: every file with its size and sha256. A name that would land outside
// the set's directory (absolute, "..", a backslash) is refused, as is one that collides with the
// agent's own .part files or .complete marker.
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { z } from "zod";
import { SHA256_HEX } from "./checksum.ts";
import { FetchError } from "./errors.ts";

export const MANIFEST_NAME = "manifest.json";
export const COMPLETE_MARKER = ".complete";

const manifestSchema = z.object({
  files: z
    .array(
      z.object({
        name: z.string().min(1).max(1024),
        size: z.number().int().nonnegative(),
        sha256: z.string().regex(SHA256_HEX, "must be 64 hex digits"),
      }),
    )
    .min(1),
});

export type Manifest = z.infer<typeof manifestSchema>;
export type ManifestFile = Manifest["files"][number];

/** Why `name` may not be a file of a set, or null. */
export function unsafeName(name: string): string | null {
  if (name.includes("\\") || name.includes("\0")) return "has a backslash or NUL";
  if (path.posix.isAbsolute(name) || /^[A-Za-z]:/.test(name)) return "is absolute";
  const parts = name.split("/");
  if (parts.some((p) => p === ".." )) return "escapes the set's directory";
  if (parts.some((p) => p === "" || p === ".")) return "has an empty or '.' segment";
  if (name === COMPLETE_MARKER || name.endsWith(".part")) return "is a name the agent keeps for itself";
  return null;
}

export function parseManifest(bytes: Buffer, source: string): Manifest {
  let raw: unknown;
  try {
    raw = JSON.parse(bytes.toString("utf8"));
  } catch (err) {
    throw new FetchError(grpc.status.INVALID_ARGUMENT, `${source} is not JSON: ${(err as Error).message}`);
  }
  const r = manifestSchema.safeParse(raw);
  if (!r.success) {
    throw new FetchError(
      grpc.status.INVALID_ARGUMENT,
      `${source} is not a valid manifest: ${r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  }
  const seen = new Set<string>();
  for (const f of r.data.files) {
    const why = unsafeName(f.name);
    if (why) throw new FetchError(grpc.status.INVALID_ARGUMENT, `${source}: file name "${f.name}" ${why}; the manifest is refused`);
    if (seen.has(f.name)) throw new FetchError(grpc.status.INVALID_ARGUMENT, `${source}: file "${f.name}" is listed twice`);
    seen.add(f.name);
  }
  return r.data;
}
