// Pickle weights run code when loaded, so they are refused unless the catalog allows them — and
// refused before anything is downloaded, judged by file name alone. A local file is on hand, so a
// `.bin` in ggml's format (whisper.cpp's models, ggml-base.en.bin …) is told apart by its first bytes.
import fs from "node:fs";
import * as grpc from "@grpc/grpc-js";
import { FetchError } from "./errors.ts";

const PICKLE_EXT = /\.(bin|pt|pt2|pth|ckpt|pkl|pickle)$/i;

export function isPickleName(name: string): boolean {
  return PICKLE_EXT.test(name);
}

/** ggml's magic, 0x67676d6c little-endian. */
const GGML_MAGIC = Buffer.from("lmgg", "ascii");

/**
 * Whether the file begins with ggml's magic. No pickle loader runs such a file: its first opcode,
 * 'l', builds a list from a mark there cannot be yet, so unpickling fails before anything else.
 */
export function isGgmlFile(file: string): boolean {
  const head = Buffer.alloc(GGML_MAGIC.length);
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, "r");
    return fs.readSync(fd, head, 0, head.length, 0) === head.length && head.equals(GGML_MAGIC);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** Throws FAILED_PRECONDITION naming the first pickle file, unless `allowPickle`. */
export function refusePickles(names: Iterable<string>, allowPickle: boolean): void {
  if (allowPickle) return;
  for (const n of names) {
    if (isPickleName(n)) {
      throw new FetchError(
        grpc.status.FAILED_PRECONDITION,
        `${n} is in a pickle format (.bin .pt .pt2 .pth .ckpt .pkl .pickle), which can run code when loaded; the catalog does not allow pickle weights for this model`,
      );
    }
  }
}
