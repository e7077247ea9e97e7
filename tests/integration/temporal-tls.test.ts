// llmgw against a Temporal that demands mutual TLS, as an operator's cluster or Temporal Cloud does:
// a TLS front (tests/helpers/tls-proxy.ts) with a CA of the test's own before the test Temporal.
// Clients that do not trust that CA, or bring no certificate, or speak plaintext, are refused; the
// platform given TEMPORAL_TLS_* files (gateway, worker and doctor alike) serves a model through it.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { Connection } from "@temporalio/client";
import OpenAI from "openai";
import { loadConfig } from "../../common/config.ts";
import { temporalConnectionOptions } from "../../common/temporal-connection.ts";
import { createCa, issueLocal, signer } from "../../common/tls/certs.ts";
import { temporal as temporalCheck } from "../../doctor/temporal.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";
import { issueServerCert, startTlsProxy, type TlsProxy } from "../helpers/tls-proxy.ts";

const SERVER_NAME = "temporal.llmgw.test";

describe("Temporal over mutual TLS", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-temporal-tls-"));
  const file = (name: string, text: string) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, text, { mode: 0o600 });
    return p;
  };
  let proxy: TlsProxy;
  let settings: NodeJS.ProcessEnv;
  let p: Platform | undefined;

  before(async () => {
    const ca = await createCa();
    const otherCa = await createCa();
    const client = await issueLocal(await signer(ca), "spiffe://llmgw/control", 3600_000);
    proxy = await startTlsProxy({ target: process.env.TEMPORAL_ADDRESS ?? "127.0.0.1:7233", server: await issueServerCert(ca, SERVER_NAME), clientCa: ca.certPem });
    settings = {
      TEMPORAL_ADDRESS: proxy.address,
      TEMPORAL_TLS_CA_FILE: file("ca.pem", ca.certPem),
      TEMPORAL_TLS_CERT_FILE: file("client.pem", client.certPem),
      TEMPORAL_TLS_KEY_FILE: file("client.key", client.keyPem),
      TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
      OTHER_CA: file("other-ca.pem", otherCa.certPem),
    };
  });
  after(async () => {
    await p?.stop();
    await proxy?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A connection with these settings (over the test's own), its first call made. */
  async function connect(env: NodeJS.ProcessEnv): Promise<string> {
    const c = loadConfig({ ...process.env, ...env });
    const conn = await Connection.connect({ ...temporalConnectionOptions(c), connectTimeout: 5_000 });
    try {
      return (await conn.workflowService.getSystemInfo({})).serverVersion ?? "";
    } finally {
      await conn.close();
    }
  }

  it("refuses a client that does not trust its CA, one without a client certificate, and plaintext", async () => {
    const { TEMPORAL_ADDRESS, TEMPORAL_TLS_CERT_FILE, TEMPORAL_TLS_KEY_FILE, TEMPORAL_TLS_CA_FILE } = settings;
    const refusedBefore = proxy.refused().length;
    // The system's roots, then another CA: the server's certificate does not check.
    await assert.rejects(connect({ TEMPORAL_ADDRESS, TEMPORAL_TLS: "1", TEMPORAL_TLS_SERVER_NAME: SERVER_NAME, TEMPORAL_TLS_CERT_FILE, TEMPORAL_TLS_KEY_FILE }));
    await assert.rejects(connect({ ...settings, TEMPORAL_TLS_CA_FILE: settings.OTHER_CA }));
    // The right CA, no certificate of its own: the server demands one.
    await assert.rejects(connect({ TEMPORAL_ADDRESS, TEMPORAL_TLS_CA_FILE, TEMPORAL_TLS_SERVER_NAME: SERVER_NAME }));
    // No TLS at all.
    await assert.rejects(connect({ TEMPORAL_ADDRESS }));
    assert.equal(proxy.accepted(), 0, "no client without the CA and a certificate got through");
    assert.ok(proxy.refused().length > refusedBefore, `the TLS front saw the handshakes fail: ${proxy.refused().join("; ")}`);
  });

  it("answers a client with the CA, its certificate and the server name; the doctor says how it connects", async () => {
    assert.notEqual(await connect(settings), "");
    const finding = await temporalCheck.run({ env: { ...process.env, ...settings }, timeoutMs: 10_000 });
    assert.equal(finding.status, "ok", finding.detail);
    assert.match(finding.detail, /mutual TLS, CA from TEMPORAL_TLS_CA_FILE, server name temporal\.llmgw\.test/);
  });

  it("runs the platform through it: a model served (workflows on the worker), a request answered", async () => {
    const accepted = proxy.accepted();
    const { OTHER_CA: _unused, ...env } = settings;
    p = await startPlatform({ env });
    const model = uniqueModel("tls");
    const served = await p.ctl(["model", "serve", model, "--engine", "sim", "--replicas", "1", "--wait"]);
    assert.equal(served.code, 0, `${served.stderr}\n${p.logTails()}`);
    await p.ctl(["projects", "create", "tls"]);
    const key = (JSON.parse((await p.ctl(["keys", "create", "--project", "tls", "--json"])).stdout) as { key: string }).key;
    const client = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key, maxRetries: 0 });
    const answer = await client.chat.completions.create({ model, messages: [{ role: "user", content: "hello" }], max_tokens: 4 });
    assert.ok(answer.choices[0]?.message.content, "the model answered");
    // The gateway's client and the worker's connection both came through the TLS front.
    assert.ok(proxy.accepted() - accepted >= 2, `${proxy.accepted() - accepted} connections through the TLS front`);
  });
});
