// How every Temporal connection (the gateway's client, the worker, the doctor) reaches the frontend:
// its address and, for an operator's cluster or Temporal Cloud, TLS (the CA to check the server
// against, a client certificate for mutual TLS, the name to expect) and an API key. Certificates and
// the key are read from files, so a secret is never in the environment, a command line or a log.
import fs from "node:fs";
import type { Config } from "./config.ts";

type TemporalSettings = Pick<
  Config,
  "TEMPORAL_ADDRESS" | "TEMPORAL_TLS" | "TEMPORAL_TLS_CA_FILE" | "TEMPORAL_TLS_CERT_FILE" | "TEMPORAL_TLS_KEY_FILE" | "TEMPORAL_TLS_SERVER_NAME" | "TEMPORAL_API_KEY_FILE"
>;

/** What Connection.connect (@temporalio/client) and NativeConnection.connect (@temporalio/worker) both take. */
export interface TemporalConnectionOptions {
  address: string;
  /** false: plaintext; an object: TLS (an empty one: the system's roots, the address's host). */
  tls: false | { serverRootCACertificate?: Buffer; clientCertPair?: { crt: Buffer; key: Buffer }; serverNameOverride?: string };
  apiKey?: string;
}

function readSetting(name: string, file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    // The path and the reason only: never the content.
    throw new Error(`${name} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** The options for a connection to Temporal, the files read now; a bad combination is an error naming the settings. */
export function temporalConnectionOptions(c: TemporalSettings): TemporalConnectionOptions {
  if (!!c.TEMPORAL_TLS_CERT_FILE !== !!c.TEMPORAL_TLS_KEY_FILE) throw new Error("TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE go together");
  const wantsTls = !!(c.TEMPORAL_TLS_CA_FILE || c.TEMPORAL_TLS_CERT_FILE || c.TEMPORAL_TLS_SERVER_NAME || c.TEMPORAL_API_KEY_FILE);
  if (c.TEMPORAL_TLS === "0" && (c.TEMPORAL_TLS_CA_FILE || c.TEMPORAL_TLS_CERT_FILE || c.TEMPORAL_TLS_SERVER_NAME)) {
    throw new Error("TEMPORAL_TLS=0 turns TLS off, yet TEMPORAL_TLS_CA_FILE, TEMPORAL_TLS_CERT_FILE or TEMPORAL_TLS_SERVER_NAME is set");
  }
  const options: TemporalConnectionOptions = { address: c.TEMPORAL_ADDRESS, tls: false };
  if (c.TEMPORAL_API_KEY_FILE) {
    const key = readSetting("TEMPORAL_API_KEY_FILE", c.TEMPORAL_API_KEY_FILE).toString("utf8").trim();
    if (!key || /\s/.test(key)) throw new Error(`TEMPORAL_API_KEY_FILE ${c.TEMPORAL_API_KEY_FILE}: expected one API key, with no spaces or line breaks`);
    options.apiKey = key;
  }
  // An API key over plaintext only when asked for by TEMPORAL_TLS=0 (a sidecar that adds TLS).
  if (c.TEMPORAL_TLS === "1" || (c.TEMPORAL_TLS === undefined && wantsTls)) {
    options.tls = {
      ...(c.TEMPORAL_TLS_CA_FILE && { serverRootCACertificate: readSetting("TEMPORAL_TLS_CA_FILE", c.TEMPORAL_TLS_CA_FILE) }),
      ...(c.TEMPORAL_TLS_CERT_FILE &&
        c.TEMPORAL_TLS_KEY_FILE && {
          clientCertPair: { crt: readSetting("TEMPORAL_TLS_CERT_FILE", c.TEMPORAL_TLS_CERT_FILE), key: readSetting("TEMPORAL_TLS_KEY_FILE", c.TEMPORAL_TLS_KEY_FILE) },
        }),
      ...(c.TEMPORAL_TLS_SERVER_NAME && { serverNameOverride: c.TEMPORAL_TLS_SERVER_NAME }),
    };
  }
  return options;
}

/** How the connection is made, for logs and the doctor: never a secret. */
export function describeTemporalConnection(o: TemporalConnectionOptions): string {
  if (!o.tls) return `${o.address} (plaintext${o.apiKey ? ", API key" : ""})`;
  const parts = [o.tls.clientCertPair ? "mutual TLS" : "TLS", o.tls.serverRootCACertificate ? "CA from TEMPORAL_TLS_CA_FILE" : "system CAs"];
  if (o.tls.serverNameOverride) parts.push(`server name ${o.tls.serverNameOverride}`);
  if (o.apiKey) parts.push("API key");
  return `${o.address} (${parts.join(", ")})`;
}
