// The Temporal connection settings (common/temporal-connection.ts): TLS on when any TLS setting or
// an API key is given, files read whole, bad combinations and unreadable files refused by name,
// and a secret never in an error or the description logs carry.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { loadConfig } from "../../common/config.ts";
import { describeTemporalConnection, temporalConnectionOptions } from "../../common/temporal-connection.ts";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-temporal-conn-"));
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text, { mode: 0o600 });
  return p;
};
const options = (env: NodeJS.ProcessEnv) => temporalConnectionOptions(loadConfig({ TEMPORAL_ADDRESS: "temporal.example:7233", ...env }));
const SECRET = "tmprl-secret-key-1234";

describe("Temporal connection settings", () => {
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("is plaintext with nothing set, and says so", () => {
    const o = options({});
    assert.equal(o.tls, false);
    assert.equal(o.apiKey, undefined);
    assert.equal(describeTemporalConnection(o), "temporal.example:7233 (plaintext)");
  });

  it("reads the CA, the client pair and the server name into TLS options", () => {
    const o = options({ TEMPORAL_TLS_CA_FILE: file("ca.pem", "CA PEM"), TEMPORAL_TLS_CERT_FILE: file("c.pem", "CERT"), TEMPORAL_TLS_KEY_FILE: file("k.pem", "KEY"), TEMPORAL_TLS_SERVER_NAME: "t.internal" });
    assert.ok(o.tls);
    assert.equal(o.tls.serverRootCACertificate?.toString(), "CA PEM");
    assert.equal(o.tls.clientCertPair?.crt.toString(), "CERT");
    assert.equal(o.tls.clientCertPair?.key.toString(), "KEY");
    assert.equal(o.tls.serverNameOverride, "t.internal");
    assert.equal(describeTemporalConnection(o), "temporal.example:7233 (mutual TLS, CA from TEMPORAL_TLS_CA_FILE, server name t.internal)");
  });

  it("takes an API key from its file (trimmed) and turns TLS on with the system's roots, as Temporal Cloud wants", () => {
    const o = options({ TEMPORAL_API_KEY_FILE: file("key", `${SECRET}\n`) });
    assert.equal(o.apiKey, SECRET);
    assert.deepEqual(o.tls, {});
    const said = describeTemporalConnection(o);
    assert.equal(said, "temporal.example:7233 (TLS, system CAs, API key)");
    assert.ok(!said.includes(SECRET));
  });

  it("honours TEMPORAL_TLS: 1 alone turns TLS on, 0 keeps an API key in plaintext (a sidecar adds TLS)", () => {
    assert.deepEqual(options({ TEMPORAL_TLS: "1" }).tls, {});
    const o = options({ TEMPORAL_TLS: "0", TEMPORAL_API_KEY_FILE: file("key0", SECRET) });
    assert.equal(o.tls, false);
    assert.equal(o.apiKey, SECRET);
  });

  it("refuses bad combinations and unreadable files by the setting's name, never showing a file's content", () => {
    assert.throws(() => options({ TEMPORAL_TLS_CERT_FILE: file("c2.pem", "CERT") }), /TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE go together/);
    assert.throws(() => options({ TEMPORAL_TLS: "0", TEMPORAL_TLS_CA_FILE: file("ca2.pem", "CA") }), /TEMPORAL_TLS=0 turns TLS off/);
    assert.throws(() => options({ TEMPORAL_TLS_CA_FILE: path.join(dir, "missing.pem") }), /TEMPORAL_TLS_CA_FILE .*missing\.pem: ENOENT/);
    assert.throws(() => options({ TEMPORAL_TLS: "yes" }), /TEMPORAL_TLS/);
    const twoKeys = `${SECRET} ${SECRET}`;
    assert.throws(
      () => options({ TEMPORAL_API_KEY_FILE: file("bad-key", twoKeys) }),
      (err: Error) => /TEMPORAL_API_KEY_FILE .*: expected one API key/.test(err.message) && !err.message.includes(SECRET),
    );
  });
});
