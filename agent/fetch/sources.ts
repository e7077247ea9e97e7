// What a Fetch source names:
//   https://host/dir/  or  …/manifest.json (URL or path)   a mirror set, downloaded into the cache
//   https://host/file.gguf                                 one file, downloaded into the cache
//   /abs/path  or  file:///abs/path                        weights already here, used in place
//   org/name                                               a hub id, left to the engine to fetch
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import { FetchError } from "./errors.ts";
import { MANIFEST_NAME } from "./manifest.ts";
import { isHttpUrl } from "./transport.ts";

export type Source =
  | { kind: "set"; manifest: string }
  | { kind: "url"; url: string }
  | { kind: "local"; path: string }
  | { kind: "hub"; id: string };

const HUB_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9._-]+)?$/;

export function classifySource(source: string): Source {
  if (isHttpUrl(source)) {
    let u: URL;
    try {
      u = new URL(source);
    } catch {
      throw new FetchError(grpc.status.INVALID_ARGUMENT, `"${source}" is not a valid URL`);
    }
    if (u.pathname.endsWith("/")) return { kind: "set", manifest: new URL(MANIFEST_NAME, u).href };
    if (path.posix.basename(u.pathname) === MANIFEST_NAME) return { kind: "set", manifest: u.href };
    return { kind: "url", url: u.href };
  }
  if (source.startsWith("file://") || path.isAbsolute(source)) {
    const p = source.startsWith("file://") ? fileURLToPath(source) : source;
    return path.basename(p) === MANIFEST_NAME ? { kind: "set", manifest: p } : { kind: "local", path: p };
  }
  if (HUB_ID.test(source) && !source.split("/").includes("..")) return { kind: "hub", id: source };
  throw new FetchError(
    grpc.status.INVALID_ARGUMENT,
    `source "${source}" is none of: an http(s) URL, a mirror set (a directory URL ending in "/" or a ${MANIFEST_NAME}), an absolute path, a hub id (org/name)`,
  );
}
