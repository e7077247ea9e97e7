// Weights already on this node (a file or a directory): used in place, after the pickle check and,
// for one file, the checksum.
import fs from "node:fs";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { sha256File } from "./checksum.ts";
import { FetchError } from "./errors.ts";
import { isGgmlFile, isPickleName, refusePickles } from "./pickle.ts";

function listFiles(root: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(root, { withFileTypes: true })) {
    const p = path.join(root, e.name);
    if (e.isDirectory()) out.push(...listFiles(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

export async function checkLocal(p: string, sha256: string, allowPickle: boolean): Promise<{ path: string; size: number }> {
  let st: fs.Stats;
  try {
    st = fs.statSync(p);
  } catch {
    throw new FetchError(grpc.status.NOT_FOUND, `${p} does not exist on this node`);
  }
  const files = st.isDirectory() ? listFiles(p) : [p];
  // On hand, a pickle-named file is judged by its bytes too: whisper.cpp's ggml models are `.bin`.
  refusePickles(
    files.filter((f) => !isPickleName(f) || !isGgmlFile(f)),
    allowPickle,
  );
  if (sha256) {
    if (st.isDirectory()) throw new FetchError(grpc.status.INVALID_ARGUMENT, "sha256 can be checked for a single file, not a directory");
    const got = await sha256File(p);
    if (got !== sha256.toLowerCase()) throw new FetchError(grpc.status.DATA_LOSS, `${p}: sha256 is ${got}, expected ${sha256.toLowerCase()}`);
  }
  return { path: p, size: files.reduce((n, f) => n + fs.statSync(f).size, 0) };
}
