// A Temporal frontend that demands TLS, for tests: the dev server has no TLS of its own (its CLI
// takes no certificate flags), so node:tls terminates TLS in front of it, as an operator's load
// balancer or Temporal Cloud's edge does, and pipes the bytes through. Its certificate names a DNS
// name (what a client checks) and comes from a CA of the test's own.
import "reflect-metadata"; // @peculiar/x509's tsyringe needs it loaded first (as common/tls/certs.ts)
import { randomBytes, webcrypto } from "node:crypto";
import net from "node:net";
import tls from "node:tls";
import * as x509 from "@peculiar/x509";
import { newKeys, signer, type KeyAndCert } from "../../common/tls/certs.ts";

/** A server certificate for `dnsName` from `ca`: what rustls and grpc-js check a frontend's against. */
export async function issueServerCert(ca: KeyAndCert, dnsName: string): Promise<KeyAndCert> {
  const s = await signer(ca);
  const keys = await newKeys();
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomBytes(8).toString("hex").replace(/^[89a-f]/, "1"),
    subject: `CN=${dnsName}`,
    issuer: s.cert.subject,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 3600_000),
    publicKey: keys.publicKey,
    signingKey: s.key,
    signingAlgorithm: s.alg,
    extensions: [
      new x509.SubjectAlternativeNameExtension([{ type: "dns", value: dnsName }]),
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      await x509.AuthorityKeyIdentifierExtension.create(s.cert),
    ],
  });
  const keyDer = await webcrypto.subtle.exportKey("pkcs8", keys.privateKey as webcrypto.CryptoKey);
  return { certPem: cert.toString("pem"), keyPem: x509.PemConverter.encode(keyDer, "PRIVATE KEY") };
}

export interface TlsProxy {
  /** host:port clients dial. */
  address: string;
  /** Connections whose TLS handshake completed (a client got through). */
  accepted(): number;
  /** Handshakes that failed, with the reason the server saw. */
  refused(): string[];
  close(): Promise<void>;
}

/** TLS on 127.0.0.1:<free port> in front of `target` (host:port, plaintext); `clientCa` set: mutual TLS, a client certificate from it required. */
export async function startTlsProxy(opts: { target: string; server: KeyAndCert; clientCa?: string }): Promise<TlsProxy> {
  const [host, port] = [opts.target.slice(0, opts.target.lastIndexOf(":")), Number(opts.target.slice(opts.target.lastIndexOf(":") + 1))];
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const refused: string[] = [];
  const server = tls.createServer(
    {
      cert: opts.server.certPem,
      key: opts.server.keyPem,
      ALPNProtocols: ["h2"], // gRPC: the Rust client refuses a server that does not choose h2
      ...(opts.clientCa && { ca: opts.clientCa, requestCert: true, rejectUnauthorized: true }),
    },
    (client) => {
      accepted++;
      const upstream = net.connect(port, host);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on("close", () => sockets.delete(s));
        s.on("error", () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    },
  );
  server.on("tlsClientError", (err) => refused.push(err.message));
  server.on("connection", (s: net.Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return {
    address: `127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    accepted: () => accepted,
    refused: () => [...refused],
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
