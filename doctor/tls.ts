// The agent protocol's TLS on this machine: plaintext is warned; the operator's certificate files
// are checked as the processes check them at start; a node's kept certificate is named with its
// expiry (docs/operations.md, "The agent protocol: mutual TLS").
import path from "node:path";
import { readKept } from "../agent/enrol.ts";
import { loadConfig } from "../common/config.ts";
import { describeCert, issuedBy, keyMatches } from "../common/tls/certs.ts";
import { checkTlsFiles, readPem, tlsFilesFrom } from "../common/tls/operator-files.ts";
import { fail, ok, warn, type Check } from "./finding.ts";

const DOC = "see docs/operations.md, The agent protocol: mutual TLS";
const WEEK = 7 * 24 * 3600_000;
const until = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace("T", " ");

export const tls: Check = {
  name: "tls",
  roles: ["node", "control"],
  async run(ctx) {
    const c = loadConfig(ctx.env);
    if (c.LLMGW_INSECURE_GRPC === "1") return warn("LLMGW_INSECURE_GRPC=1: the agent protocol runs in plaintext, on the cluster token alone", `unset it on every gateway, worker and agent (${DOC})`);
    const files = tlsFilesFrom(c);
    try {
      checkTlsFiles(files);
      if (files.certFile) {
        const caPem = readPem(files.caFile!, "LLMGW_TLS_CA_FILE");
        const certPem = readPem(files.certFile, "LLMGW_TLS_CERT_FILE");
        const d = describeCert(certPem);
        if (!keyMatches(certPem, readPem(files.keyFile!, "LLMGW_TLS_KEY_FILE"))) return fail("LLMGW_TLS_KEY_FILE is not the key of LLMGW_TLS_CERT_FILE", DOC);
        if (!issuedBy(certPem, caPem)) return fail("LLMGW_TLS_CERT_FILE is not valid now under LLMGW_TLS_CA_FILE", DOC);
        const detail = `LLMGW_TLS_CERT_FILE: ${d.identities.join(", ") || "no URI SAN"}, until ${until(d.notAfter)}`;
        return d.notAfter - Date.now() < WEEK ? warn(detail, "renew it: llmgw does not renew a certificate given as a file") : ok(detail);
      }
      if (files.caFile) readPem(files.caFile, "LLMGW_TLS_CA_FILE");
    } catch (err) {
      return fail((err as Error).message, DOC);
    }
    const ca = files.caFile ? `the CA of LLMGW_TLS_CA_FILE${files.caKeyFile ? ", issued from here" : ""}` : "the cluster CA in PostgreSQL";
    const dir = path.join(c.dataDir, "agent", c.LLMGW_NODE_ID, "tls");
    const kept = readKept(dir, c.LLMGW_NODE_ID);
    if (kept) return ok(`mutual TLS under ${ca}; node ${c.LLMGW_NODE_ID}'s certificate until ${until(describeCert(kept.certPem).notAfter)}`);
    return ok(`mutual TLS under ${ca}; an agent here enrols with the cluster token at its start`);
  },
};
