// Who is on the other end of an agent-protocol connection: a URI SAN in its certificate, never a
// host name or address (nodes move, addresses are reused, a control plane has many hosts).
//   spiffe://llmgw/control          a gateway or worker
//   spiffe://llmgw/node/<nodeId>    the agent of that node
import type { PeerCertificate } from "node:tls";

export const CONTROL_IDENTITY = "spiffe://llmgw/control";
const NODE_PREFIX = "spiffe://llmgw/node/";

/** Node ids as the agent accepts them (agent/server.ts): safe inside a URI without escaping. */
export const NODE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/;

export function nodeIdentity(nodeId: string): string {
  if (!NODE_ID.test(nodeId)) throw new Error(`"${nodeId}" is not a node id`);
  return NODE_PREFIX + nodeId;
}

/** The node id an identity names, or null when it names none. */
export function nodeIdOf(identity: string): string | null {
  if (!identity.startsWith(NODE_PREFIX)) return null;
  const id = identity.slice(NODE_PREFIX.length);
  return NODE_ID.test(id) ? id : null;
}

/** The URI SANs of a certificate as node:tls and node:crypto print them ("URI:a, DNS:b"). */
export function uriSans(subjectAltName: string | undefined): string[] {
  if (!subjectAltName) return [];
  return subjectAltName
    .split(", ")
    .filter((s) => s.startsWith("URI:"))
    .map((s) => s.slice(4).replace(/^"(.*)"$/, "$1"));
}

/**
 * A `checkServerIdentity` for grpc-js VerifyOptions: the chain has verified against the CA by the
 * time this runs; it refuses a certificate carrying no identity that `accept` takes. The host
 * name is ignored on purpose.
 */
export function expectPeer(accept: (identity: string) => boolean, what: string): (host: string, cert: PeerCertificate) => Error | undefined {
  return (_host, cert) => {
    const ids = uriSans(cert.subjectaltname);
    if (ids.some(accept)) return undefined;
    return Object.assign(new Error(`the peer's certificate is not ${what} (it names ${ids.join(", ") || "no llmgw identity"})`), { code: "ERR_LLMGW_PEER_IDENTITY" });
  };
}

export const isControl = (identity: string): boolean => identity === CONTROL_IDENTITY;
export const isNode = (identity: string): boolean => nodeIdOf(identity) !== null;
