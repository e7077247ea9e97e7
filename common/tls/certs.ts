// X.509 for the agent protocol, with @peculiar/x509 over node's webcrypto: the cluster CA, CSRs,
// and short-lived leaf certificates whose only identity is a URI SAN (common/tls/identity.ts).
// New keys are ECDSA P-256; an operator's CA key may also be P-384 or RSA.
import "reflect-metadata"; // @peculiar/x509's tsyringe needs a Reflect polyfill loaded before it
import { createPrivateKey, randomBytes, webcrypto, X509Certificate } from "node:crypto";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

type SignAlg = EcdsaParams & EcKeyImportParams;
const P256: SignAlg = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
const CA_LIFETIME_MS = 10 * 365 * 24 * 3600_000;

/** A certificate and its private key (PKCS#8), both PEM. */
export interface KeyAndCert {
  certPem: string;
  keyPem: string;
}

/** A CA that can sign: its certificate (the first of certPem) and private key. */
export interface Signer {
  certPem: string;
  cert: x509.X509Certificate;
  key: CryptoKey;
  alg: Algorithm;
}

const serial = () => {
  const b = randomBytes(16);
  b[0]! &= 0x7f; // a positive INTEGER
  return b.toString("hex");
};

async function exportKey(key: CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey("pkcs8", key as webcrypto.CryptoKey), "PRIVATE KEY");
}

export async function newKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(P256, true, ["sign", "verify"])) as unknown as CryptoKeyPair;
}

/** A new self-signed CA for the cluster, valid ten years. */
export async function createCa(): Promise<KeyAndCert> {
  const keys = await newKeys();
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=llmgw cluster CA ${new Date(now).toISOString().slice(0, 10)}`,
    notBefore: new Date(now - 3600_000),
    notAfter: new Date(now + CA_LIFETIME_MS),
    keys,
    signingAlgorithm: P256,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString("pem"), keyPem: await exportKey(keys.privateKey) };
}

/** The signing algorithm of a private key in any PEM node reads (PKCS#8, SEC1, PKCS#1). */
function algorithmOf(pem: string): { der: Buffer; alg: SignAlg | (RsaHashedImportParams & Algorithm) } {
  const k = createPrivateKey(pem);
  const der = k.export({ format: "der", type: "pkcs8" });
  if (k.asymmetricKeyType === "ec") {
    const curve = k.asymmetricKeyDetails?.namedCurve;
    if (curve === "prime256v1") return { der, alg: P256 };
    if (curve === "secp384r1") return { der, alg: { name: "ECDSA", namedCurve: "P-384", hash: "SHA-384" } };
    throw new Error(`CA key on curve ${curve}: only P-256 and P-384 are supported`);
  }
  if (k.asymmetricKeyType === "rsa") return { der, alg: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" } };
  throw new Error(`CA key of type ${k.asymmetricKeyType}: only EC and RSA are supported`);
}

/** A Signer from a CA certificate PEM (its first certificate) and the matching private key PEM. */
export async function signer(ca: KeyAndCert): Promise<Signer> {
  const cert = new x509.X509Certificate(firstPem(ca.certPem));
  const { der, alg } = algorithmOf(ca.keyPem);
  const key = (await webcrypto.subtle.importKey("pkcs8", der, alg, false, ["sign"])) as unknown as CryptoKey;
  // A key that is not the certificate's would issue certificates nobody can verify.
  const probe = new X509Certificate(await issueRaw({ certPem: ca.certPem, cert, key, alg }, "spiffe://llmgw/probe", (await newKeys()).publicKey, 60_000));
  if (!probe.verify(new X509Certificate(cert.toString("pem")).publicKey)) throw new Error("the CA key does not match the CA certificate");
  return { certPem: ca.certPem, cert, key, alg };
}

async function issueRaw(ca: Signer, identity: string, publicKey: CryptoKey | x509.PublicKey, lifetimeMs: number): Promise<string> {
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${identity.split("/").pop()}`,
    issuer: ca.cert.subject,
    // A little earlier than now, for clocks a little behind; little enough to renew on time.
    notBefore: new Date(now - Math.min(5 * 60_000, lifetimeMs / 10)),
    notAfter: new Date(now + lifetimeMs),
    publicKey,
    signingKey: ca.key,
    signingAlgorithm: ca.alg,
    extensions: [
      new x509.SubjectAlternativeNameExtension([{ type: "url", value: identity }]),
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      // Every llmgw process is both a TLS server and a TLS client.
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
    ],
  });
  return cert.toString("pem");
}

/** A certificate for `identity` over the public key of a CSR, once its signature checks. */
export async function issueFromCsr(ca: Signer, identity: string, csrPem: string, lifetimeMs: number): Promise<string> {
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(csrPem);
  } catch (err) {
    throw new Error(`not a PKCS#10 request: ${(err as Error).message}`);
  }
  if (!(await csr.verify())) throw new Error("the request's signature does not check");
  return issueRaw(ca, identity, csr.publicKey, lifetimeMs);
}

/** A new key and a certificate for it, issued here (a control-plane process issues its own). */
export async function issueLocal(ca: Signer, identity: string, lifetimeMs: number): Promise<KeyAndCert> {
  const keys = await newKeys();
  return { certPem: await issueRaw(ca, identity, keys.publicKey, lifetimeMs), keyPem: await exportKey(keys.privateKey) };
}

/** A new key and a CSR for it (the identity asked for is the server's to decide). */
export async function newCsr(identity: string): Promise<{ csrPem: string; keyPem: string }> {
  const keys = await newKeys();
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: `CN=${identity.split("/").pop()}`,
    keys,
    signingAlgorithm: P256,
    extensions: [new x509.SubjectAlternativeNameExtension([{ type: "url", value: identity }])],
  });
  return { csrPem: csr.toString("pem"), keyPem: await exportKey(keys.privateKey) };
}

/** The first PEM block of a bundle. */
export function firstPem(pem: string): string {
  const m = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem);
  if (!m) throw new Error("no certificate in the PEM");
  return m[0] + "\n";
}

/** Every certificate of a PEM bundle. */
export function pemBlocks(pem: string): string[] {
  return [...pem.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)].map((m) => m[0] + "\n");
}

/** Validity and identities of a certificate PEM (its first certificate). */
export function describeCert(pem: string): { notBefore: number; notAfter: number; identities: string[]; serial: string } {
  const c = new X509Certificate(firstPem(pem));
  return {
    notBefore: Date.parse(c.validFrom),
    notAfter: Date.parse(c.validTo),
    identities: (c.subjectAltName ?? "").split(", ").filter((s) => s.startsWith("URI:")).map((s) => s.slice(4)),
    serial: c.serialNumber,
  };
}

/** Whether `certPem` was signed by one of the CAs of `caPem` and is valid now. */
export function issuedBy(certPem: string, caPem: string, now = Date.now()): boolean {
  const c = new X509Certificate(firstPem(certPem));
  if (Date.parse(c.validFrom) > now || Date.parse(c.validTo) <= now) return false;
  return pemBlocks(caPem).some((ca) => {
    const issuer = new X509Certificate(ca);
    return c.checkIssued(issuer) && c.verify(issuer.publicKey);
  });
}

/** Whether the private key PEM is the one of the certificate PEM. */
export function keyMatches(certPem: string, keyPem: string): boolean {
  try {
    return new X509Certificate(firstPem(certPem)).checkPrivateKey(createPrivateKey(keyPem));
  } catch {
    return false;
  }
}
