// The agent protocol's mutual TLS against the real Control service and the cluster CA in the store
// (a scratch database): enrolment by token discovery, who may Register and Heartbeat, Renew, who
// may call an agent and whom the control plane takes for one, an agent renewing its certificate
// before it expires and working on past the first one's expiry, an agent enrolling again when the
// CA changed, an operator's CA and certificate files, and the CA made once and remade for a new
// token.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import pg from "pg";
import { startAgent, type RunningAgent } from "../../agent/server.ts";
import { agentClient } from "../../agent/client.ts";
import { loadConfig } from "../../common/config.ts";
import { closePrisma, prisma, type PrismaClient } from "../../common/db.ts";
import { ensureDatabase, migrate } from "../../common/migrate.ts";
import { agentProto, deadline, tokenMetadata, type ControlClient } from "../../common/proto.ts";
import { clusterCa } from "../../common/tls/ca-store.ts";
import { createCa, describeCert, issueLocal, newCsr, signer } from "../../common/tls/certs.ts";
import { controlPlaneTls, type ControlPlaneTls } from "../../common/tls/control-plane.ts";
import { channelCredentials, serverCredentials, TLS_CHANNEL_OPTIONS, type GrpcTls } from "../../common/tls/credentials.ts";
import { caMacChecks } from "../../common/tls/discovery.ts";
import { CONTROL_IDENTITY, expectPeer, isControl, nodeIdentity } from "../../common/tls/identity.ts";
import { startControlServer } from "../../gateway/control-grpc/server.ts";
import { testCa, tlsOf } from "../helpers/tls.ts";
import { freePort } from "../helpers/platform.ts";
import type { CertificateResponse__Output } from "../../common/generated/proto/llmgw/agent/v1/CertificateResponse.ts";
import type { ClusterCaResponse__Output } from "../../common/generated/proto/llmgw/agent/v1/ClusterCaResponse.ts";

const TOKEN = "tls-test-token-" + randomBytes(6).toString("hex");
const serverUrl = process.env.DATABASE_URL ?? loadConfig().databaseUrl;
const scratch = `llmgw_tls_${randomBytes(4).toString("hex")}`;
const url = Object.assign(new URL(serverUrl), { pathname: `/${scratch}` }).href;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "llmgw-tls-test-"));
const NO_GPUS = path.join(dataDir, "no-nvidia-smi"); // no GPUs, even on a GPU machine
const portBase = 20000 + Math.floor(Math.random() * 400) * 100;

let db: PrismaClient;
const closers: (() => unknown)[] = [];

before(async () => {
  await ensureDatabase(url);
  await migrate(url);
  db = prisma(url);
});

after(async () => {
  for (const c of closers.reverse()) await c();
  await closePrisma();
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${scratch}" WITH (FORCE)`).finally(() => admin.end());
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function waitFor<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function control(tls: ControlPlaneTls, port = 0) {
  const c = await startControlServer({ db, token: TOKEN, tls, host: "127.0.0.1", port, heartbeatMs: 300 });
  closers.push(() => c.close());
  return c;
}

/** A Control client over `creds`, its calls as promises resolving to the answer or the error's code. */
function controlClient(address: string, creds: grpc.ChannelCredentials) {
  const c = new (agentProto().Control)(address, creds, TLS_CHANNEL_OPTIONS) as unknown as ControlClient;
  closers.push(() => c.close());
  const md = (token = TOKEN) => tokenMetadata(token);
  const res = <T>(fn: (cb: grpc.requestCallback<T>) => unknown) => new Promise<T | number>((resolve) => fn((err, r) => resolve(err ? err.code : (r as T))));
  const node = (nodeId: string) => ({ nodeId, address: "127.0.0.1:1" });
  return {
    clusterCa: () => res<ClusterCaResponse__Output>((cb) => c.ClusterCa({}, deadline(5000), cb)),
    join: (nodeId: string, csrPem: string, token?: string) => res<CertificateResponse__Output>((cb) => c.Join({ nodeId, csrPem }, md(token), deadline(5000), cb)),
    renew: (csrPem: string) => res<CertificateResponse__Output>((cb) => c.Renew({ csrPem }, md(), deadline(5000), cb)),
    register: (nodeId: string) => res<object>((cb) => c.Register({ node: node(nodeId) }, md(), deadline(5000), cb)),
    heartbeat: (nodeId: string) => res<object>((cb) => c.Heartbeat({ node: node(nodeId), replicas: [] }, md(), deadline(5000), cb)),
  };
}

/** Credentials that trust the CA of `tls` and expect the control identity, presenting its certificate (or none). */
function credsOf(tls: GrpcTls, withCertificate = true): grpc.ChannelCredentials {
  return grpc.experimental.createCertificateProviderChannelCredentials(tls.provider, withCertificate ? tls.provider : null, { checkServerIdentity: expectPeer(isControl, "the control plane") });
}

test("Control: the CA by token discovery, Join with the token, Register and Heartbeat only with the node's own certificate, Renew", { timeout: 60_000 }, async () => {
  const tls = await controlPlaneTls({ db, token: TOKEN, lifetimeMs: 3600_000, files: {} });
  closers.push(() => tls.close());
  const { port } = await control(tls);
  const address = `127.0.0.1:${port}`;
  const caPem = tls.caPem();

  // Unverified, as an agent that has nothing yet: the CA comes with a MAC only the token makes.
  const unverified = controlClient(address, grpc.credentials.createSsl(null, null, null, { rejectUnauthorized: false, checkServerIdentity: () => undefined }));
  const disc = (await unverified.clusterCa()) as ClusterCaResponse__Output;
  assert.equal(disc.caPem, caPem);
  assert.ok(caMacChecks(TOKEN, disc.caPem, disc.mac));
  assert.ok(!caMacChecks("another-token", disc.caPem, disc.mac));
  // The token never goes over that connection's kind: Join over it still needs the token, and
  // verified TLS against another CA does not even connect.
  const elsewhere = await testCa();
  assert.equal(await controlClient(address, credsOf(elsewhere.trustOnly(), false)).clusterCa(), grpc.status.UNAVAILABLE);

  const trusting = controlClient(address, credsOf(tlsOf(caPem, null), false));
  const x = await newCsr(nodeIdentity("node-x"));
  assert.equal(await trusting.join("node-x", x.csrPem, "wrong-token"), grpc.status.UNAUTHENTICATED);
  assert.equal(await trusting.join("../x", x.csrPem), grpc.status.INVALID_ARGUMENT);
  assert.equal(await trusting.join("node-x", "not a csr"), grpc.status.INVALID_ARGUMENT);
  const joined = (await trusting.join("node-x", x.csrPem)) as CertificateResponse__Output;
  assert.deepEqual(describeCert(joined.certPem).identities, [nodeIdentity("node-x")]);
  assert.equal(joined.caPem, caPem);

  // Without a client certificate, or with one from another CA: not a node at all.
  assert.equal(await trusting.register("node-x"), grpc.status.UNAUTHENTICATED);
  assert.equal(await trusting.heartbeat("node-x"), grpc.status.UNAUTHENTICATED);
  assert.equal(await trusting.renew(x.csrPem), grpc.status.UNAUTHENTICATED);
  const foreign = controlClient(address, credsOf(tlsOf(caPem, await elsewhere.issue(nodeIdentity("node-x")))));
  assert.equal(await foreign.register("node-x"), grpc.status.UNAUTHENTICATED);
  assert.equal(await foreign.renew(x.csrPem), grpc.status.UNAUTHENTICATED);

  // Node X's certificate: X registers and heartbeats; Y's Register and Heartbeat are refused.
  const asX = controlClient(address, credsOf(tlsOf(caPem, { certPem: joined.certPem, keyPem: x.keyPem })));
  assert.deepEqual(await asX.register("node-x"), { heartbeatIntervalMs: 300 });
  assert.deepEqual(await asX.heartbeat("node-x"), {});
  assert.equal(await asX.register("node-y"), grpc.status.PERMISSION_DENIED);
  assert.equal(await asX.heartbeat("node-y"), grpc.status.PERMISSION_DENIED);
  assert.equal(await db.node.count({ where: { id: "node-y" } }), 0);
  // Renew gives X a new certificate, for X whatever the CSR asks.
  const y = await newCsr(nodeIdentity("node-y"));
  const renewed = (await asX.renew(y.csrPem)) as CertificateResponse__Output;
  assert.deepEqual(describeCert(renewed.certPem).identities, [nodeIdentity("node-x")]);
  assert.notEqual(describeCert(renewed.certPem).serial, describeCert(joined.certPem).serial);
});

/** An agent on its own data directory, enrolling with the Control service at `address`. */
async function agentFor(nodeId: string, address: string, extra: Partial<Parameters<typeof startAgent>[0]> = {}): Promise<RunningAgent> {
  const agent = await startAgent({
    dataDir: path.join(dataDir, nodeId),
    nodeId,
    host: "127.0.0.1",
    port: 0,
    controlAddress: address,
    clusterToken: TOKEN,
    heartbeatMs: 300,
    metricsPort: null,
    enginePortMin: portBase,
    enginePortMax: portBase + 99,
    stopEnginesOnExit: true,
    labels: {},
    nvidiaSmi: NO_GPUS,
    ...extra,
  });
  closers.push(() => agent.close());
  return agent;
}

test("an agent takes calls only from the control plane's certificate; the control plane's client takes only an agent's", { timeout: 60_000 }, async () => {
  const tls = await controlPlaneTls({ db, token: TOKEN, lifetimeMs: 3600_000, files: {} });
  closers.push(() => tls.close());
  const { port } = await control(tls);
  const agent = await agentFor("node-callers", `127.0.0.1:${port}`);
  await waitFor("the agent to register", async () => (await lastSeen("node-callers")) > 0);
  const caPem = tls.caPem();

  const attempt = async (creds: grpc.ChannelCredentials | GrpcTls | null): Promise<number> => {
    const c = new (agentProto().Agent)(agent.address, creds instanceof grpc.ChannelCredentials ? creds : channelCredentials(creds, "node"), TLS_CHANNEL_OPTIONS);
    try {
      return await new Promise((resolve) => c.Describe({}, tokenMetadata(TOKEN), deadline(3000), (err) => resolve(err ? err.code : grpc.status.OK)));
    } finally {
      c.close();
    }
  };
  // The handshake itself refuses a client with no certificate, one from another CA, or no TLS.
  const trustOnly = tlsOf(caPem, null);
  assert.equal(await attempt(grpc.experimental.createCertificateProviderChannelCredentials(trustOnly.provider, null, { checkServerIdentity: () => undefined })), grpc.status.UNAVAILABLE);
  const elsewhere = await testCa();
  assert.equal(await attempt(tlsOf(caPem, await elsewhere.issue(CONTROL_IDENTITY))), grpc.status.UNAVAILABLE);
  assert.equal(await attempt(null), grpc.status.UNAVAILABLE);
  // Another node's certificate from the cluster CA passes the handshake and is refused by identity.
  const other = await newCsr(nodeIdentity("node-other"));
  const otherCert = (await controlClient(`127.0.0.1:${port}`, credsOf(trustOnly, false)).join("node-other", other.csrPem)) as CertificateResponse__Output;
  assert.equal(await attempt(tlsOf(caPem, { certPem: otherCert.certPem, keyPem: other.keyPem })), grpc.status.PERMISSION_DENIED);
  assert.equal(await attempt(tls), grpc.status.OK);

  // The other way: a server that is not a node of this cluster (the control identity; another CA's node) is refused.
  for (const serverTls of [tls, await elsewhere.tls(nodeIdentity("node-callers"))]) {
    const server = new grpc.Server();
    server.addService(agentProto().Agent.service, { Describe: (_call: unknown, cb: grpc.sendUnaryData<object>) => cb(null, {}) });
    const p = await new Promise<number>((resolve, reject) => server.bindAsync("127.0.0.1:0", serverCredentials(serverTls, false), (err, n) => (err ? reject(err) : resolve(n))));
    const c = agentClient(`127.0.0.1:${p}`, TOKEN, tls, { timeoutMs: 3000 });
    await assert.rejects(c.describe(), (e) => (e as grpc.ServiceError).code === grpc.status.UNAVAILABLE);
    c.close();
    server.forceShutdown();
  }
});

const lastSeen = async (nodeId: string) => (await db.node.findUnique({ where: { id: nodeId } }))?.lastSeen.getTime() ?? 0;

test("certificates are renewed before they expire; calls and heartbeats work on past the first one's expiry", { timeout: 90_000 }, async () => {
  // Six-second certificates for the control plane and the agent alike.
  const tls = await controlPlaneTls({ db, token: TOKEN, lifetimeMs: 6000, files: {} });
  closers.push(() => tls.close());
  const port = await freePort();
  let server = await control(tls, port);
  const agent = await agentFor("node-renew", `127.0.0.1:${port}`);
  await waitFor("the agent to enrol and register", async () => (await lastSeen("node-renew")) > 0);

  const certFile = path.join(dataDir, "node-renew", "agent", "node-renew", "tls", "cert.pem");
  assert.equal(fs.statSync(path.join(path.dirname(certFile), "key.pem")).mode & 0o777, 0o600);
  const first = describeCert(fs.readFileSync(certFile, "utf8"));
  assert.ok(first.notAfter - Date.now() <= 6500, "the agent's certificate has the control plane's lifetime");
  const renewed = await waitFor("the agent's certificate to be renewed", () => {
    const now = describeCert(fs.readFileSync(certFile, "utf8"));
    return now.serial !== first.serial && now;
  });
  // Issued before the first expired, by the renewed one's own dates (each lives 6 s), not by when
  // this test happened to look at the file.
  assert.ok(renewed.notAfter - 6000 < first.notAfter, "renewed before the first certificate expired");
  assert.ok(renewed.notAfter > first.notAfter);

  await new Promise((r) => setTimeout(r, Math.max(0, first.notAfter - Date.now()) + 1000));
  // New connections both ways, well past the first certificates' expiry: a new channel from the
  // control plane to the agent, and a restarted Control service the agent reconnects to.
  const client = agentClient({ address: agent.address, nodeId: "node-renew" }, TOKEN, tls, { timeoutMs: 5000 });
  closers.push(() => client.close());
  assert.equal((await client.describe()).nodeId, "node-renew");
  // The control plane calls a node by the id the store has for that address: another node's
  // certificate there (an address taken over) is refused by the handshake.
  const elsewhere = agentClient({ address: agent.address, nodeId: "node-other" }, TOKEN, tls, { timeoutMs: 3000 });
  closers.push(() => elsewhere.close());
  await assert.rejects(elsewhere.describe(), (err: grpc.ServiceError) => err.code === grpc.status.UNAVAILABLE);
  // The renewed server certificate did not loosen the handshake: a client without one is still refused.
  const noCertificate = grpc.experimental.createCertificateProviderChannelCredentials(tlsOf(tls.caPem(), null).provider, null, { checkServerIdentity: () => undefined });
  const bare = new (agentProto().Agent)(agent.address, noCertificate, TLS_CHANNEL_OPTIONS);
  closers.push(() => bare.close());
  assert.equal(await new Promise((resolve) => bare.Describe({}, tokenMetadata(TOKEN), deadline(3000), (err) => resolve(err?.code))), grpc.status.UNAVAILABLE);
  await server.close();
  server = await control(tls, port);
  const restartedAt = Date.now();
  await waitFor("a heartbeat over a new connection", async () => (await lastSeen("node-renew")) > restartedAt + 100);
});

test("an agent whose control plane's CA changed enrols again by itself", { timeout: 90_000 }, async () => {
  const port = await freePort();
  const tls1 = await controlPlaneTls({ db, token: TOKEN, lifetimeMs: 3600_000, files: {} });
  closers.push(() => tls1.close());
  const server1 = await control(tls1, port);
  await agentFor("node-recheck", `127.0.0.1:${port}`);
  await waitFor("the agent to register", async () => (await lastSeen("node-recheck")) > 0);
  const caFile = path.join(dataDir, "node-recheck", "agent", "node-recheck", "tls", "ca.pem");
  assert.equal(fs.readFileSync(caFile, "utf8"), tls1.caPem());

  // The CA is gone from the store (as after a restore without it): the next process makes another.
  await server1.close();
  await db.clusterCa.deleteMany();
  const tls2 = await controlPlaneTls({ db, token: TOKEN, lifetimeMs: 3600_000, files: {} });
  closers.push(() => tls2.close());
  assert.notEqual(tls2.caPem(), tls1.caPem());
  await control(tls2, port);
  const at = Date.now();
  await waitFor("heartbeats under the new CA", async () => (await lastSeen("node-recheck")) > at, 60_000);
  assert.equal(fs.readFileSync(caFile, "utf8"), tls2.caPem());
});

test("an operator's CA and certificates, as files: issued from, served as they are, pinned; checked at start", { timeout: 60_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(dataDir, "operator-"));
  const file = (name: string, text: string) => {
    fs.writeFileSync(path.join(dir, name), text, { mode: 0o600 });
    return path.join(dir, name);
  };
  const op = await createCa();
  const s = await signer(op);
  const caFile = file("ca.pem", op.certPem);
  const caKeyFile = file("ca-key.pem", op.keyPem);

  // A control plane issuing from the operator's CA.
  const tls = await controlPlaneTls({ db, token: TOKEN, lifetimeMs: 3600_000, files: { caFile, caKeyFile } });
  closers.push(() => tls.close());
  assert.equal(tls.caPem(), op.certPem);
  const { port } = await control(tls);
  const address = `127.0.0.1:${port}`;

  // An agent given its own certificate files registers without enrolling.
  const node = await issueLocal(s, nodeIdentity("node-files"), 3600_000);
  const nodeFiles = { caFile, certFile: file("node.pem", node.certPem), keyFile: file("node-key.pem", node.keyPem) };
  await agentFor("node-files", address, { tlsFiles: nodeFiles });
  await waitFor("the agent with files to register", async () => (await lastSeen("node-files")) > 0);
  assert.equal(fs.existsSync(path.join(dataDir, "node-files", "agent", "node-files", "tls")), false);
  // One given only the CA file trusts it without discovery, and enrols with the token.
  await agentFor("node-pinned", address, { tlsFiles: { caFile } });
  await waitFor("the pinned agent to register", async () => (await lastSeen("node-pinned")) > 0);
  assert.equal(fs.readFileSync(path.join(dataDir, "node-pinned", "agent", "node-pinned", "tls", "ca.pem"), "utf8"), op.certPem);
  // Files that do not fit are refused at start, naming the setting.
  await assert.rejects(agentFor("node-wrong", address, { tlsFiles: nodeFiles }), /LLMGW_TLS_CERT_FILE .* is not node "node-wrong"'s certificate/);
  await assert.rejects(agentFor("node-files", address, { dataDir: path.join(dataDir, "node-badkey"), tlsFiles: { ...nodeFiles, keyFile: caKeyFile } }), /LLMGW_TLS_KEY_FILE .* is not the key/);
  await assert.rejects(controlPlaneTls({ db, token: TOKEN, lifetimeMs: 3600_000, files: { caFile } }), /needs LLMGW_TLS_CA_KEY_FILE/);

  // A control plane serving the operator's own certificate, without the CA key, enrols nobody.
  const mine = await issueLocal(s, CONTROL_IDENTITY, 3600_000);
  const served = await controlPlaneTls({ db, token: TOKEN, lifetimeMs: 3600_000, files: { caFile, certFile: file("control.pem", mine.certPem), keyFile: file("control-key.pem", mine.keyPem) } });
  closers.push(() => served.close());
  const other = await control(served);
  const trusting = controlClient(`127.0.0.1:${other.port}`, credsOf(tlsOf(op.certPem, null), false));
  assert.equal(await trusting.join("node-z", (await newCsr(nodeIdentity("node-z"))).csrPem), grpc.status.FAILED_PRECONDITION);
  const asNode = controlClient(`127.0.0.1:${other.port}`, credsOf(tlsOf(op.certPem, node)));
  assert.deepEqual(await asNode.register("node-files"), { heartbeatIntervalMs: 300 });
});

test("LLMGW_INSECURE_GRPC=1: plaintext both ways, the cluster token alone", { timeout: 60_000 }, async () => {
  const server = await startControlServer({ db, token: TOKEN, tls: null, host: "127.0.0.1", port: 0, heartbeatMs: 300 });
  closers.push(() => server.close());
  const agent = await agentFor("node-plain", `127.0.0.1:${server.port}`, { insecureGrpc: true });
  await waitFor("the plaintext agent to register", async () => (await lastSeen("node-plain")) > 0);
  assert.equal(fs.existsSync(path.join(dataDir, "node-plain", "agent", "node-plain", "tls")), false);
  const plain = agentClient(agent.address, TOKEN, null);
  const wrong = agentClient(agent.address, "not-the-token", null);
  const overTls = agentClient(agent.address, TOKEN, await (await testCa()).tls(), { timeoutMs: 3000 });
  closers.push(() => [plain, wrong, overTls].forEach((c) => c.close()));
  assert.equal((await plain.describe()).nodeId, "node-plain");
  await assert.rejects(wrong.describe(), (e) => (e as grpc.ServiceError).code === grpc.status.UNAUTHENTICATED);
  await assert.rejects(overTls.describe(), (e) => (e as grpc.ServiceError).code === grpc.status.UNAVAILABLE);
});

test("the cluster CA is made once (two processes racing agree), its key sealed; a new token makes a new one", async () => {
  await db.clusterCa.deleteMany();
  const [a, b, c] = await Promise.all([clusterCa(db, TOKEN), clusterCa(db, TOKEN), clusterCa(db, TOKEN)]);
  assert.equal(a.certPem, b.certPem);
  assert.equal(a.certPem, c.certPem);
  assert.equal(a.keyPem, b.keyPem);
  const row = await db.clusterCa.findUniqueOrThrow({ where: { id: 1 } });
  assert.doesNotMatch(row.keySealed, /PRIVATE KEY|BEGIN/);
  assert.equal(await db.clusterCa.count(), 1);

  const other = await clusterCa(db, "a-new-cluster-token");
  assert.notEqual(other.certPem, a.certPem);
  assert.equal((await clusterCa(db, "a-new-cluster-token")).certPem, other.certPem, "then kept");
  assert.equal(await db.clusterCa.count(), 1);
});
