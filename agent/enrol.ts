// The agent's certificate: enrolment with the cluster token, renewal, and where it is kept
// (<dataDir>/agent/<nodeId>/tls/: ca.pem, cert.pem, key.pem 0600). Enrolment is kubeadm's token
// discovery: the CA is fetched over a connection not yet verified and kept only if its HMAC checks
// with this node's token; the token itself goes only over TLS verified against that CA (Join).
// With the operator's LLMGW_TLS_CERT_FILE/KEY_FILE there is no enrolment; with LLMGW_TLS_CA_FILE
// alone, that CA is trusted instead of discovering one.
import fs from "node:fs";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { log } from "../common/logging.ts";
import { agentProto, deadline, tokenMetadata, type ControlClient } from "../common/proto.ts";
import { describeCert, issuedBy, keyMatches, newCsr } from "../common/tls/certs.ts";
import { dial, TLS_CHANNEL_OPTIONS, type GrpcTls } from "../common/tls/credentials.ts";
import { expectPeer, isControl, nodeIdentity } from "../common/tls/identity.ts";
import { checkTlsFiles, readPem, serveFiles, type TlsFiles } from "../common/tls/operator-files.ts";
import { MemoryCertificateProvider } from "../common/tls/provider.ts";
import { keepRenewed, type Renewal } from "../common/tls/renewal.ts";
import { caMacChecks } from "../common/tls/discovery.ts";
import type { CertificateResponse__Output } from "../common/generated/proto/llmgw/agent/v1/CertificateResponse.ts";
import type { ClusterCaResponse__Output } from "../common/generated/proto/llmgw/agent/v1/ClusterCaResponse.ts";

export interface AgentTls extends GrpcTls {
  /** After calls to the control plane failed: fetch its CA again and enrol again if it changed. */
  recheck(): Promise<void>;
}

export interface AgentTlsOptions {
  /** Where key, certificate and CA are kept. */
  dir: string;
  nodeId: string;
  token: string;
  /** The Control service; null: no enrolment, the kept (or the operator's) certificate must do. */
  controlAddress: string | null;
  files: TlsFiles;
  callTimeoutMs?: number;
  /** Enrolment attempts before `ready` rejects with the last refusal; default: retried until closed. */
  attempts?: number;
}

interface Material {
  caPem: string;
  certPem: string;
  keyPem: string;
}

const FILES = { caPem: "ca.pem", certPem: "cert.pem", keyPem: "key.pem" } as const;

/** The certificate kept in `dir`, when it is this node's, matches its key and is valid under its CA now. */
export function readKept(dir: string, nodeId: string): Material | null {
  let m: Material;
  try {
    m = {
      caPem: fs.readFileSync(path.join(dir, FILES.caPem), "utf8"),
      certPem: fs.readFileSync(path.join(dir, FILES.certPem), "utf8"),
      keyPem: fs.readFileSync(path.join(dir, FILES.keyPem), "utf8"),
    };
  } catch {
    return null;
  }
  return usable(m, nodeId) ? m : null;
}

function usable(m: Material, nodeId: string): boolean {
  try {
    return describeCert(m.certPem).identities.includes(nodeIdentity(nodeId)) && keyMatches(m.certPem, m.keyPem) && issuedBy(m.certPem, m.caPem);
  } catch {
    return false;
  }
}

/** Writes each file whole (temp file, rename), the key 0600: a crash never leaves half a key. */
export function keep(dir: string, m: Material): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const [k, name] of Object.entries(FILES) as [keyof Material, string][]) {
    const tmp = path.join(dir, `.${name}.${process.pid}`);
    fs.writeFileSync(tmp, m[k], { mode: k === "keyPem" ? 0o600 : 0o644 });
    fs.renameSync(tmp, path.join(dir, name));
  }
}

const unary = <Res>(fn: (cb: grpc.requestCallback<Res>) => unknown): Promise<Res> =>
  new Promise((resolve, reject) => fn((err, res) => (err ? reject(err) : resolve(res as Res))));

export async function agentTls(o: AgentTlsOptions): Promise<AgentTls> {
  checkTlsFiles(o.files);
  const provider = new MemoryCertificateProvider();
  const identity = nodeIdentity(o.nodeId);
  const callMs = o.callTimeoutMs ?? 10_000;

  if (o.files.certFile) {
    const files = serveFiles(provider, o.files, (ids) => ids.includes(identity), `node "${o.nodeId}"`);
    return { provider, caPem: files.caPem, ready: Promise.resolve(), close: files.stop, recheck: async () => undefined };
  }

  const pinned = o.files.caFile ? readPem(o.files.caFile, "LLMGW_TLS_CA_FILE") : null;
  let current = readKept(o.dir, o.nodeId);
  if (current && pinned && current.caPem !== pinned) current = null;
  if (!current && !o.controlAddress) {
    throw new Error(`node "${o.nodeId}" has no certificate in ${o.dir} and no control plane to enrol with (LLMGW_CONTROL_ADDRESS); or give LLMGW_TLS_CERT_FILE and LLMGW_TLS_KEY_FILE`);
  }
  const controlAddress = o.controlAddress;

  const install = (m: Material) => {
    keep(o.dir, m);
    current = m;
    provider.set(m);
  };

  const checked = (res: CertificateResponse__Output, keyPem: string): Material => {
    const m = { caPem: res.caPem, certPem: res.certPem, keyPem };
    if (!usable(m, o.nodeId)) throw new Error(`the control plane answered with a certificate that is not node "${o.nodeId}"'s under its CA`);
    return m;
  };

  /** The control plane's CA, trusted only when its MAC checks with our token. */
  const discover = async (address: string): Promise<string> => {
    // Not verified, on purpose: the MAC is what makes the answer trustworthy.
    const creds = grpc.credentials.createSsl(null, null, null, { rejectUnauthorized: false, checkServerIdentity: () => undefined });
    const c = new (agentProto().Control)(address, creds, TLS_CHANNEL_OPTIONS) as unknown as ControlClient;
    try {
      const res = await unary<ClusterCaResponse__Output>((cb) => c.ClusterCa({}, deadline(callMs), cb));
      if (!caMacChecks(o.token, res.caPem, res.mac)) {
        throw new Error("the control plane's CA does not check with this node's cluster token (a different LLMGW_CLUSTER_TOKEN, or not this cluster's control plane)");
      }
      return res.caPem;
    } finally {
      c.close();
    }
  };

  const join = async (address: string, caPem: string): Promise<void> => {
    const trust = new MemoryCertificateProvider();
    trust.set({ caPem });
    const creds = grpc.experimental.createCertificateProviderChannelCredentials(trust, null, { checkServerIdentity: expectPeer(isControl, "the control plane's") });
    const c = new (agentProto().Control)(address, creds, TLS_CHANNEL_OPTIONS) as unknown as ControlClient;
    try {
      const { csrPem, keyPem } = await newCsr(identity);
      const res = await unary<CertificateResponse__Output>((cb) => c.Join({ nodeId: o.nodeId, csrPem }, tokenMetadata(o.token), deadline(callMs), cb));
      install(checked(res, keyPem));
      log.info("enrolled with the control plane: certificate issued", { node: o.nodeId, notAfter: new Date(describeCert(res.certPem).notAfter).toISOString() });
    } finally {
      c.close();
    }
  };

  const renew = async (address: string): Promise<void> => {
    const c = dial(agentProto().Control, address, self, "control") as unknown as ControlClient;
    try {
      const { csrPem, keyPem } = await newCsr(identity);
      const res = await unary<CertificateResponse__Output>((cb) => c.Renew({ csrPem }, tokenMetadata(o.token), deadline(callMs), cb));
      install(checked(res, keyPem));
      log.info("certificate renewed", { node: o.nodeId, notAfter: new Date(describeCert(res.certPem).notAfter).toISOString() });
    } catch (err) {
      // A certificate the control plane no longer takes (its CA changed, this one expired): join again.
      log.warn("renewal refused; enrolling again with the cluster token", { node: o.nodeId, err: (err as grpc.ServiceError).details ?? (err as Error).message });
      await join(address, pinned ?? (await discover(address)));
    } finally {
      c.close();
    }
  };

  let renewal: Renewal | undefined;
  let closed = false;
  const startRenewing = () => {
    if (controlAddress && !closed) renewal = keepRenewed(`node ${o.nodeId}`, () => current!.certPem, () => renew(controlAddress));
  };

  let ready: Promise<void>;
  if (current) {
    provider.set(current);
    ready = Promise.resolve();
    startRenewing();
  } else {
    ready = (async () => {
      for (let attempt = 0; !closed; attempt++) {
        try {
          await join(controlAddress!, pinned ?? (await discover(controlAddress!)));
          startRenewing();
          return;
        } catch (err) {
          if (o.attempts !== undefined && attempt + 1 >= o.attempts) throw new Error((err as grpc.ServiceError).details ?? (err as Error).message);
          const wait = Math.min(30_000, 500 * 2 ** Math.min(attempt, 10));
          if (attempt === 0 || attempt % 10 === 0) {
            log.warn("enrolment with the control plane failed; retrying", { node: o.nodeId, control: controlAddress, err: (err as grpc.ServiceError).details ?? (err as Error).message, retryMs: wait });
          }
          await new Promise((r) => setTimeout(r, wait).unref());
        }
      }
    })();
  }

  let lastRecheck = 0;
  const self: AgentTls = {
    provider,
    caPem: () => current?.caPem ?? "",
    ready,
    close() {
      closed = true;
      renewal?.stop();
    },
    async recheck() {
      // At most every 15 s, and only with a certificate to compare (enrolment retries by itself).
      if (!controlAddress || pinned || !current || Date.now() - lastRecheck < 15_000) return;
      lastRecheck = Date.now();
      try {
        const caPem = await discover(controlAddress);
        if (caPem === current.caPem) return;
        log.warn("the control plane's CA changed (its cluster token did?): enrolling again", { node: o.nodeId });
        await join(controlAddress, caPem);
      } catch (err) {
        log.debug("CA recheck failed", { err: (err as Error).message });
      }
    },
  };
  return self;
}
