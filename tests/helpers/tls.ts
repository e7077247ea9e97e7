// Certificates for tests that talk to an agent (or stand in for the Control service) in-process:
// a CA of their own, issuing with the production code (common/tls/certs.ts).
import path from "node:path";
import { keep } from "../../agent/enrol.ts";
import { createCa, issueFromCsr, issueLocal, signer, type KeyAndCert } from "../../common/tls/certs.ts";
import type { GrpcTls } from "../../common/tls/credentials.ts";
import { CONTROL_IDENTITY, nodeIdentity } from "../../common/tls/identity.ts";
import { MemoryCertificateProvider } from "../../common/tls/provider.ts";

export interface TestCa {
  caPem: string;
  /** A certificate and key for any identity (spiffe://llmgw/…), from this CA. */
  issue(identity: string, lifetimeMs?: number): Promise<KeyAndCert>;
  /** The TLS of a control-plane process (spiffe://llmgw/control), or of `identity`. */
  tls(identity?: string, lifetimeMs?: number): Promise<GrpcTls>;
  /** Only trust: no certificate of its own (a client that has none). */
  trustOnly(): GrpcTls;
  /** Puts a certificate for the node where its agent looks (<dataDir>/agent/<node>/tls), so it needs no enrolment. */
  keepFor(dataDir: string, nodeId: string, lifetimeMs?: number): Promise<void>;
  /** What a stand-in Control service needs to enrol agents (gateway/control-grpc/enrolment.ts). */
  issuing: { caPem(): string; issueNode(nodeId: string, csrPem: string): Promise<string> };
}

const HOUR = 3600_000;

export function tlsOf(caPem: string, mine: KeyAndCert | null): GrpcTls {
  const provider = new MemoryCertificateProvider();
  provider.set({ caPem, ...(mine ?? {}) });
  return { provider, caPem: () => caPem, ready: Promise.resolve(), close: () => undefined };
}

export async function testCa(): Promise<TestCa> {
  const ca = await createCa();
  const s = await signer(ca);
  const issue = (identity: string, lifetimeMs = HOUR) => issueLocal(s, identity, lifetimeMs);
  return {
    caPem: ca.certPem,
    issue,
    tls: async (identity = CONTROL_IDENTITY, lifetimeMs = HOUR) => tlsOf(ca.certPem, await issue(identity, lifetimeMs)),
    trustOnly: () => tlsOf(ca.certPem, null),
    async keepFor(dataDir, nodeId, lifetimeMs = HOUR) {
      keep(path.join(dataDir, "agent", nodeId, "tls"), { caPem: ca.certPem, ...(await issue(nodeIdentity(nodeId), lifetimeMs)) });
    },
    issuing: { caPem: () => ca.certPem, issueNode: (nodeId, csrPem) => issueFromCsr(s, nodeIdentity(nodeId), csrPem, HOUR) },
  };
}
