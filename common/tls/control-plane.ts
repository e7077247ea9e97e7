// The TLS of a control-plane process (gateway, Temporal worker): it trusts the cluster CA, holds a
// certificate for spiffe://llmgw/control issued here from that CA and renewed here, and — where
// it has the CA's key — issues agents' certificates (the gateway's Control service).
//   default                         the CA in the store (common/tls/ca-store.ts)
//   LLMGW_TLS_CA_FILE + _CA_KEY_FILE the operator's CA, issued from here
//   LLMGW_TLS_CERT_FILE + _KEY_FILE  the operator's certificate as it is; issues agents'
//                                    certificates only with LLMGW_TLS_CA_KEY_FILE too
import type { PrismaClient } from "../db.ts";
import { log } from "../logging.ts";
import { clusterCa } from "./ca-store.ts";
import { describeCert, issueFromCsr, issueLocal, signer, type KeyAndCert, type Signer } from "./certs.ts";
import { plaintextGrpc, type GrpcTls } from "./credentials.ts";
import { CONTROL_IDENTITY, nodeIdentity } from "./identity.ts";
import { checkTlsFiles, readPem, serveFiles, tlsFilesFrom, type TlsFiles } from "./operator-files.ts";
import { MemoryCertificateProvider } from "./provider.ts";
import { keepRenewed } from "./renewal.ts";

export interface ControlPlaneTls extends GrpcTls {
  /** A certificate for the node from its CSR; null where this process holds no CA key. */
  issueNode: ((nodeId: string, csrPem: string) => Promise<string>) | null;
}

export interface ControlPlaneTlsOptions {
  db: PrismaClient;
  token: string;
  /** Lifetime of the certificates issued here (this process's, agents'). */
  lifetimeMs: number;
  files: TlsFiles;
}

export async function controlPlaneTls(o: ControlPlaneTlsOptions): Promise<ControlPlaneTls> {
  checkTlsFiles(o.files);
  if (o.files.caFile && !o.files.caKeyFile && !o.files.certFile) {
    throw new Error("LLMGW_TLS_CA_FILE on a gateway or worker needs LLMGW_TLS_CA_KEY_FILE (llmgw issues from your CA) or LLMGW_TLS_CERT_FILE and LLMGW_TLS_KEY_FILE (your certificate)");
  }
  const provider = new MemoryCertificateProvider();
  let ca: KeyAndCert | null = null;
  if (o.files.caFile && o.files.caKeyFile) ca = { certPem: readPem(o.files.caFile, "LLMGW_TLS_CA_FILE"), keyPem: readPem(o.files.caKeyFile, "LLMGW_TLS_CA_KEY_FILE") };
  else if (!o.files.caFile) ca = await clusterCa(o.db, o.token);
  const issuer: Signer | null = ca ? await signer(ca) : null;
  const issueNode = issuer ? (nodeId: string, csrPem: string) => issueFromCsr(issuer, nodeIdentity(nodeId), csrPem, o.lifetimeMs) : null;

  if (o.files.certFile) {
    const files = serveFiles(provider, o.files, (ids) => ids.includes(CONTROL_IDENTITY), "a control-plane process");
    return { provider, caPem: files.caPem, ready: Promise.resolve(), issueNode, close: files.stop };
  }

  const caPem = ca!.certPem;
  let mine = await issueLocal(issuer!, CONTROL_IDENTITY, o.lifetimeMs);
  provider.set({ caPem, ...mine });
  const renewal = keepRenewed(
    "control plane",
    () => mine.certPem,
    async () => {
      mine = await issueLocal(issuer!, CONTROL_IDENTITY, o.lifetimeMs);
      provider.set(mine);
      log.info("control-plane certificate renewed", { notAfter: new Date(describeCert(mine.certPem).notAfter).toISOString() });
    },
  );
  return { provider, caPem: () => caPem, ready: Promise.resolve(), issueNode, close: () => renewal.stop() };
}

/** The process's TLS from its settings; null where LLMGW_INSECURE_GRPC=1 (warned). */
export async function controlPlaneTlsFromConfig(
  c: { LLMGW_INSECURE_GRPC: string; LLMGW_TLS_CERT_LIFETIME_MS: number } & Parameters<typeof tlsFilesFrom>[0],
  db: PrismaClient,
  token: string,
): Promise<ControlPlaneTls | null> {
  if (plaintextGrpc(c.LLMGW_INSECURE_GRPC)) return null;
  return controlPlaneTls({ db, token, lifetimeMs: c.LLMGW_TLS_CERT_LIFETIME_MS, files: tlsFilesFrom(c) });
}
