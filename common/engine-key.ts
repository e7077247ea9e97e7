// The key a replica's engine demands (ComfyUI's gate today). Derived from the cluster token and the
// replica id, so it differs per replica, is never stored, and every worker (and a retried
// StartReplica) arrives at the same one; only holders of the cluster token can make it.
import { createHmac } from "node:crypto";

export function engineKey(clusterToken: string, replicaId: string): string {
  return createHmac("sha256", clusterToken).update(`engine-key/${replicaId}`).digest("base64url");
}

/** The header a request to the replica's engine carries. */
export function engineAuth(clusterToken: string, replicaId: string): { authorization: string } {
  return { authorization: `Bearer ${engineKey(clusterToken, replicaId)}` };
}
