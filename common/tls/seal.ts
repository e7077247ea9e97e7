// The cluster CA's private key at rest in the store: AES-256-GCM under a key derived (HKDF-SHA256)
// from the cluster token, bound to the CA certificate as associated data, so a row whose key and
// certificate were swapped does not open. Only processes holding the token can issue.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

const VERSION = "v1";

function keyFrom(token: string): Buffer {
  return Buffer.from(hkdfSync("sha256", token, "llmgw cluster CA", "ca-key-seal v1", 32));
}

/** `v1.<base64 of iv|tag|ciphertext>` */
export function seal(token: string, plaintext: string, boundTo: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv("aes-256-gcm", keyFrom(token), iv);
  c.setAAD(Buffer.from(boundTo));
  const body = Buffer.concat([c.update(plaintext, "utf8"), c.final()]);
  return `${VERSION}.${Buffer.concat([iv, c.getAuthTag(), body]).toString("base64")}`;
}

/** The plaintext, or null when it does not open with this token (the token changed) or is malformed. */
export function open(token: string, sealed: string, boundTo: string): string | null {
  const [v, b64] = sealed.split(".", 2);
  if (v !== VERSION || !b64) return null;
  const raw = Buffer.from(b64, "base64");
  if (raw.length < 29) return null;
  try {
    const d = createDecipheriv("aes-256-gcm", keyFrom(token), raw.subarray(0, 12));
    d.setAAD(Buffer.from(boundTo));
    d.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString("utf8");
  } catch {
    return null;
  }
}
