// Pickle weights run code when loaded, so they are refused unless the catalog allows them — and
// refused before anything is downloaded, judged by file name alone.
import * as grpc from "@grpc/grpc-js";
import { FetchError } from "./errors.ts";

const PICKLE_EXT = /\.(bin|pt|pt2|pth|ckpt|pkl|pickle)$/i;

export function isPickleName(name: string): boolean {
  return PICKLE_EXT.test(name);
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
