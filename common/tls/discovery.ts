// The MAC of token discovery (as kubeadm's): the Control service sends its CA with
// HMAC-SHA256(cluster token, CA PEM); an agent that fetched both over a connection it could not
// verify yet trusts the CA only when the MAC checks with its own token.
import { createHmac, timingSafeEqual } from "node:crypto";

export function caMac(token: string, caPem: string): Buffer {
  return createHmac("sha256", token).update(caPem).digest();
}

export function caMacChecks(token: string, caPem: string, mac: Buffer): boolean {
  const want = caMac(token, caPem);
  return mac.length === want.length && timingSafeEqual(mac, want);
}
