// The credential a batch's lines are sent to the gateway with (activities/batches.ts): it stands
// for the key that made the batch. Derived from the cluster token and the batch id, so it is never
// stored, every worker makes the same one, and only holders of the cluster token can make it; the
// gateway accepts it only while the batch is running and its key is still good (gateway/auth/batch-keys.ts).
import { createHmac, timingSafeEqual } from "node:crypto";

export const BATCH_CREDENTIAL_PREFIX = "llmgw-batch-";

const mac = (clusterToken: string, batchId: string) => createHmac("sha256", clusterToken).update(`batch-credential/${batchId}`).digest("base64url");

export function batchCredential(clusterToken: string, batchId: string): string {
  return `${BATCH_CREDENTIAL_PREFIX}${batchId}.${mac(clusterToken, batchId)}`;
}

/** The batch id the credential was made for, or null when it was not made with this cluster token. */
export function batchOfCredential(clusterToken: string, credential: string): string | null {
  if (!credential.startsWith(BATCH_CREDENTIAL_PREFIX)) return null;
  const rest = credential.slice(BATCH_CREDENTIAL_PREFIX.length);
  const dot = rest.lastIndexOf(".");
  if (dot <= 0) return null;
  const batchId = rest.slice(0, dot);
  const given = Buffer.from(rest.slice(dot + 1));
  const want = Buffer.from(mac(clusterToken, batchId));
  return given.length === want.length && timingSafeEqual(given, want) ? batchId : null;
}
