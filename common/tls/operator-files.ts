// Certificates an operator gives as files instead of llmgw's own (docs/operations.md):
//   LLMGW_TLS_CA_FILE       the CA(s) to trust (PEM bundle)
//   LLMGW_TLS_CA_KEY_FILE   the CA's key: control-plane processes then issue from that CA
//   LLMGW_TLS_CERT_FILE     this process's certificate, with the URI SAN of its role
//   LLMGW_TLS_KEY_FILE      and its key
// Files are read again every minute, so a certificate renewed by the operator's tooling is taken
// without a restart; one that does not check (identity, key, CA) is logged and the old one kept.
import fs from "node:fs";
import { log } from "../logging.ts";
import { describeCert, issuedBy, keyMatches } from "./certs.ts";
import type { MemoryCertificateProvider } from "./provider.ts";

export interface TlsFiles {
  caFile?: string | undefined;
  caKeyFile?: string | undefined;
  certFile?: string | undefined;
  keyFile?: string | undefined;
}

export function tlsFilesFrom(c: { LLMGW_TLS_CA_FILE?: string | undefined; LLMGW_TLS_CA_KEY_FILE?: string | undefined; LLMGW_TLS_CERT_FILE?: string | undefined; LLMGW_TLS_KEY_FILE?: string | undefined }): TlsFiles {
  return { caFile: c.LLMGW_TLS_CA_FILE, caKeyFile: c.LLMGW_TLS_CA_KEY_FILE, certFile: c.LLMGW_TLS_CERT_FILE, keyFile: c.LLMGW_TLS_KEY_FILE };
}

/** The combinations that make sense, or an error naming the settings. */
export function checkTlsFiles(f: TlsFiles): void {
  if (!!f.certFile !== !!f.keyFile) throw new Error("LLMGW_TLS_CERT_FILE and LLMGW_TLS_KEY_FILE go together");
  if (f.certFile && !f.caFile) throw new Error("LLMGW_TLS_CERT_FILE needs LLMGW_TLS_CA_FILE, the CA its peers' certificates come from");
  if (f.caKeyFile && !f.caFile) throw new Error("LLMGW_TLS_CA_KEY_FILE needs LLMGW_TLS_CA_FILE, the CA's certificate");
}

export function readPem(file: string, what: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (err) {
    throw new Error(`${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** Reads CA, certificate and key, checks they agree and that the certificate is `identity`'s. */
function load(f: Required<Pick<TlsFiles, "caFile" | "certFile" | "keyFile">>, identity: (ids: string[]) => boolean, role: string) {
  const caPem = readPem(f.caFile, "LLMGW_TLS_CA_FILE");
  const certPem = readPem(f.certFile, "LLMGW_TLS_CERT_FILE");
  const keyPem = readPem(f.keyFile, "LLMGW_TLS_KEY_FILE");
  const ids = describeCert(certPem).identities;
  if (!identity(ids)) throw new Error(`LLMGW_TLS_CERT_FILE ${f.certFile} is not ${role}'s certificate (its URI SANs: ${ids.join(", ") || "none"})`);
  if (!keyMatches(certPem, keyPem)) throw new Error(`LLMGW_TLS_KEY_FILE ${f.keyFile} is not the key of LLMGW_TLS_CERT_FILE ${f.certFile}`);
  if (!issuedBy(certPem, caPem)) throw new Error(`LLMGW_TLS_CERT_FILE ${f.certFile} is not valid now under LLMGW_TLS_CA_FILE ${f.caFile}`);
  return { caPem, certPem, keyPem };
}

/**
 * Serves the operator's files through `provider`, read now (throws when they do not check) and
 * every `everyMs` after. Returns a stop function.
 */
export function serveFiles(provider: MemoryCertificateProvider, f: TlsFiles, identity: (ids: string[]) => boolean, role: string, everyMs = 60_000): { caPem: () => string; stop: () => void } {
  const files = { caFile: f.caFile!, certFile: f.certFile!, keyFile: f.keyFile! };
  let current = load(files, identity, role);
  provider.set(current);
  const timer = setInterval(() => {
    try {
      const next = load(files, identity, role);
      if (next.certPem !== current.certPem || next.keyPem !== current.keyPem || next.caPem !== current.caPem) {
        current = next;
        provider.set(next);
        log.info("certificate files changed: serving the new ones", { cert: files.certFile, notAfter: new Date(describeCert(next.certPem).notAfter).toISOString() });
      }
    } catch (err) {
      log.warn("certificate files do not check; the previous ones are kept", { err: (err as Error).message });
    }
  }, everyMs);
  timer.unref();
  return { caPem: () => current.caPem, stop: () => clearInterval(timer) };
}
