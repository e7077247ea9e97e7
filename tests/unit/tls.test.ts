// The agent protocol's TLS pieces that need no service: the CA key's seal, identities in
// certificates, when a certificate is renewed, issuing from an operator's CA of another key type,
// and which operator files go together.
import { test } from "node:test";
import assert from "node:assert/strict";
import "reflect-metadata";
import { webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";
import { createCa, describeCert, issueFromCsr, issuedBy, issueLocal, keyMatches, newCsr, signer } from "../../common/tls/certs.ts";
import { caMac, caMacChecks } from "../../common/tls/discovery.ts";
import { CONTROL_IDENTITY, expectPeer, isControl, isNode, nodeIdentity, nodeIdOf, uriSans } from "../../common/tls/identity.ts";
import { checkTlsFiles } from "../../common/tls/operator-files.ts";
import { renewAt } from "../../common/tls/renewal.ts";
import { open, seal } from "../../common/tls/seal.ts";

test("the CA key's seal opens only with the same token and the same certificate", () => {
  const sealed = seal("token-a", "the key", "cert-1");
  assert.match(sealed, /^v1\./);
  assert.doesNotMatch(sealed, /the key/);
  assert.equal(open("token-a", sealed, "cert-1"), "the key");
  assert.equal(open("token-b", sealed, "cert-1"), null);
  assert.equal(open("token-a", sealed, "cert-2"), null);
  assert.equal(open("token-a", "v1.AAAA", "cert-1"), null);
  assert.equal(open("token-a", "v2." + sealed.slice(3), "cert-1"), null);
  assert.notEqual(seal("token-a", "the key", "cert-1"), sealed, "a fresh IV each time");
});

test("the discovery MAC checks only with the token it was made with", () => {
  const mac = caMac("token-a", "ca pem");
  assert.ok(caMacChecks("token-a", "ca pem", mac));
  assert.ok(!caMacChecks("token-b", "ca pem", mac));
  assert.ok(!caMacChecks("token-a", "other pem", mac));
  assert.ok(!caMacChecks("token-a", "ca pem", mac.subarray(0, 16)));
});

test("identities: URI SANs, node ids, and the peer check that ignores host names", () => {
  assert.equal(nodeIdentity("gpu-07"), "spiffe://llmgw/node/gpu-07");
  assert.throws(() => nodeIdentity("../x"));
  assert.equal(nodeIdOf("spiffe://llmgw/node/gpu-07"), "gpu-07");
  assert.equal(nodeIdOf("spiffe://llmgw/node/a/b"), null);
  assert.equal(nodeIdOf(CONTROL_IDENTITY), null);
  assert.deepEqual(uriSans("DNS:example.com, URI:spiffe://llmgw/control, IP Address:10.0.0.1"), [CONTROL_IDENTITY]);
  assert.deepEqual(uriSans(undefined), []);
  const check = expectPeer(isNode, "a node's");
  assert.equal(check("10.0.0.1", { subjectaltname: "URI:spiffe://llmgw/node/gpu-07" } as never), undefined);
  assert.match(String(check("gpu-07", { subjectaltname: "URI:spiffe://llmgw/control" } as never)), /not a node's/);
  assert.ok(expectPeer(isControl, "the control plane's")("x", { subjectaltname: "DNS:x" } as never) instanceof Error);
});

test("issued certificates: the identity, the lifetime, renewal at two thirds, the CA and the key", async () => {
  const ca = await createCa();
  const s = await signer(ca);
  const t0 = Date.now();
  const mine = await issueLocal(s, CONTROL_IDENTITY, 60_000);
  const t1 = Date.now();
  const d = describeCert(mine.certPem);
  assert.deepEqual(d.identities, [CONTROL_IDENTITY]);
  // A minute from when it was issued, between the clock read before and after (X.509 keeps whole seconds).
  assert.ok(d.notAfter >= t0 + 60_000 - 1000 && d.notAfter <= t1 + 60_000, `notAfter ${d.notAfter - t0} ms after the issue began`);
  assert.equal(renewAt(mine.certPem), d.notBefore + ((d.notAfter - d.notBefore) * 2) / 3);
  assert.ok(issuedBy(mine.certPem, ca.certPem));
  assert.ok(!issuedBy(mine.certPem, (await createCa()).certPem));
  assert.ok(!issuedBy(mine.certPem, ca.certPem, d.notAfter + 1), "not after it expired");
  assert.ok(keyMatches(mine.certPem, mine.keyPem));

  // From a CSR: the identity is the issuer's choice, not the request's; a tampered CSR is refused.
  const req = await newCsr(nodeIdentity("asked-for"));
  const cert = await issueFromCsr(s, nodeIdentity("given"), req.csrPem, 60_000);
  assert.deepEqual(describeCert(cert).identities, [nodeIdentity("given")]);
  assert.ok(keyMatches(cert, req.keyPem));
  await assert.rejects(issueFromCsr(s, nodeIdentity("x"), "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----", 60_000));
  await assert.rejects(signer({ certPem: ca.certPem, keyPem: (await createCa()).keyPem }), /does not match/);
});

test("an operator's CA may have an RSA or a P-384 key", async () => {
  for (const alg of [
    { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]) },
    { name: "ECDSA", namedCurve: "P-384", hash: "SHA-384" },
  ]) {
    const keys = (await webcrypto.subtle.generateKey(alg, true, ["sign", "verify"])) as unknown as CryptoKeyPair;
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: "01",
      name: "CN=operator CA",
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 3600_000),
      keys,
      signingAlgorithm: alg,
      extensions: [new x509.BasicConstraintsExtension(true, 0, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
    });
    const keyPem = x509.PemConverter.encode(await webcrypto.subtle.exportKey("pkcs8", keys.privateKey as webcrypto.CryptoKey), "PRIVATE KEY");
    const s = await signer({ certPem: cert.toString("pem"), keyPem });
    const leaf = await issueLocal(s, nodeIdentity("n1"), 60_000);
    assert.ok(issuedBy(leaf.certPem, cert.toString("pem")), alg.name);
  }
});

test("operator files: which go together", () => {
  assert.doesNotThrow(() => checkTlsFiles({}));
  assert.doesNotThrow(() => checkTlsFiles({ caFile: "ca", caKeyFile: "key" }));
  assert.doesNotThrow(() => checkTlsFiles({ caFile: "ca", certFile: "c", keyFile: "k" }));
  assert.doesNotThrow(() => checkTlsFiles({ caFile: "ca" }));
  assert.throws(() => checkTlsFiles({ caFile: "ca", certFile: "c" }), /go together/);
  assert.throws(() => checkTlsFiles({ certFile: "c", keyFile: "k" }), /needs LLMGW_TLS_CA_FILE/);
  assert.throws(() => checkTlsFiles({ caKeyFile: "k" }), /needs LLMGW_TLS_CA_FILE/);
});
