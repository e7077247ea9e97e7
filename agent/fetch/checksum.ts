// SHA-256 of a file, streamed.
import { createHash } from "node:crypto";
import fs from "node:fs";

export const SHA256_HEX = /^[0-9a-f]{64}$/i;

/** `onChunk` is told of each chunk read (a caller reports hashing a large file as progress). */
export async function sha256File(file: string, onChunk?: () => void): Promise<string> {
  const h = createHash("sha256");
  for await (const chunk of fs.createReadStream(file)) {
    h.update(chunk as Buffer);
    onChunk?.();
  }
  return h.digest("hex");
}

export function sha256Of(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}
