// The gateway process: client API (the hot path), admin API, metrics, and the Control gRPC
// service agents report to. It starts workflows but never waits on Temporal to answer a client.
import http from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { config } from "../common/config.ts";
import { jsonFallbacks } from "../common/json-fallback.ts";
import { subscribeChanges, WEIGHTS_KEY } from "../common/change-feed.ts";
import { GuardService } from "./guard/service.ts";
import { AnswerCache } from "./cache/answer-cache.ts";
import { ExactStore } from "./cache/exact-store.ts";
import { CacheSettingsBook } from "./cache/settings.ts";
import { SimilarStore } from "./cache/similar-store.ts";
import { embedText } from "./router/embed-text.ts";
import { Judge } from "./guard/judge.ts";
import { askModel } from "./router/ask-model.ts";
import { TokenCounter } from "./router/token-count.ts";
import { closePrisma, prisma } from "../common/db.ts";
import { log } from "../common/logging.ts";
import { Notifier, setNotifier } from "../common/notifier.ts";
import { redis } from "../common/redis.ts";
import { readOrCreateSecret } from "../common/secrets.ts";
import { temporalClient } from "../common/temporal.ts";
import { controlPlaneTlsFromConfig } from "../common/tls/control-plane.ts";
import { adminApi } from "./admin-api/app.ts";
import { SessionStore } from "./people/sessions.ts";
import { BatchKeys } from "./auth/batch-keys.ts";
import { KeyCache } from "./auth/key-cache.ts";
import { LimitBook } from "./auth/limit-book.ts";
import { Limiter } from "./auth/limiter.ts";
import { clientApi } from "./client-api/app.ts";
import { authRoutes } from "./client-api/auth-routes.ts";
import { withHotPath } from "./client-api/hot-path.ts";
import { ResponseStore } from "./client-api/responses/store.ts";
import { startControlServer } from "./control-grpc/server.ts";
import { GatewayMetrics } from "./metrics.ts";
import { startMcp, withMcp } from "./mcp/gateway.ts";
import { adminReads } from "./admin-api/reads.ts";
import { agentClient, type AgentApi } from "../agent/client.ts";
import { perNode, type NodeRef } from "../activities/deps.ts";
import { IdentityProviders } from "./people/sign-in-settings.ts";
import { EndpointRegistry } from "./router/registry.ts";
import { engineKey } from "../common/engine-key.ts";
import { Waker } from "./router/wake.ts";
import { PriceBook } from "./usage/price-book.ts";
import { UsageRecorder } from "./usage/recorder.ts";
import { BatchLines } from "./client-api/batch-line-once.ts";

export interface Gateway {
  clientPort: number;
  adminPort: number;
  metricsPort: number;
  controlPort: number;
  close(): Promise<void>;
}

function listen(app: http.RequestListener, host: string, port: number): Promise<http.Server> {
  return new Promise((resolve, reject) => {
    const server = http.createServer(app);
    server.keepAliveTimeout = 65_000;
    server.once("error", reject);
    server.listen(port, host, () => resolve(server));
  });
}

const portOf = (s: http.Server) => (s.address() as AddressInfo).port;
const closeServer = (s: http.Server) =>
  new Promise<void>((resolve) => {
    s.close(() => resolve());
    s.closeIdleConnections();
  });

export async function startGateway(): Promise<Gateway> {
  const c = config();
  const db = prisma();
  const adminToken = readOrCreateSecret(c.dataDir, "admin-token", c.LLMGW_ADMIN_TOKEN);
  const clusterToken = readOrCreateSecret(c.dataDir, "cluster-token", c.LLMGW_CLUSTER_TOKEN);

  const weightsConn = redis();
  const registry = new EndpointRegistry(db, {
    engineKey: (replicaId) => engineKey(clusterToken, replicaId),
    replicaSlots: c.LLMGW_REPLICA_SLOTS,
    admission: c.LLMGW_ADMISSION === "on",
    loadWeights: async () => Object.fromEntries(Object.entries(await weightsConn.hgetall(WEIGHTS_KEY)).map(([m, w]) => [m, JSON.parse(w) as Record<string, number>])),
  });
  await registry.start();
  const keys = new KeyCache(db, c.LLMGW_KEY_CACHE_MS);
  const metrics = new GatewayMetrics();
  const temporal = await temporalClient();
  const waker = new Waker({ temporal: temporal.client, taskQueue: c.LLMGW_TASK_QUEUE, redis: weightsConn, registry, metrics: metrics.registry, waitMs: c.LLMGW_WAKE_WAIT_MS });
  const guard = new GuardService(db, metrics.registry);
  guard.judge = new Judge(askModel(registry));
  await guard.reload();
  // The answer cache (docs/cache.md): settings in memory; answers in Redis (fails fast) and pgvector.
  const cacheBook = new CacheSettingsBook(db);
  await cacheBook.reload();
  const reloadCache = () => void cacheBook.reload().catch((err: unknown) => log.warn("answer cache settings reload failed", { error: err as Error }));
  const cacheConn = redis(undefined, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 250 });
  cacheConn.on("error", () => undefined);
  const cache = new AnswerCache(cacheBook, new ExactStore(cacheConn), new SimilarStore(db), embedText(registry), metrics.registry);
  const sub = redis();
  await subscribeChanges(
    sub,
    (change) => {
      if (change.kind === "replica") {
        registry.apply(change);
        waker.changed(change.replica.model);
      } else if (change.kind === "weights") registry.setWeights(change.model, change.weights);
      else if (change.kind === "guard") void guard.reload().catch((err: unknown) => log.warn("guard policies reload failed", { error: err as Error }));
      else if (change.kind === "cache") reloadCache();
      else keys.evict(change.hash);
    },
    (raw) => log.warn("ignored a malformed change-feed message", { bytes: raw.length }),
  );
  // Messages published while we were disconnected are lost: reload from the store on reconnect,
  // and once now for those published between the first load and the subscription (a replica that
  // became ready while this gateway started was otherwise never routed to).
  sub.on("ready", () => void registry.reload().catch((err) => log.warn("registry reload failed", { error: err })));
  sub.on("ready", () => void guard.reload().catch((err: unknown) => log.warn("guard policies reload failed", { error: err as Error })));
  sub.on("ready", reloadCache);
  await registry.reload();

  const usageConn = redis();
  const prices = new PriceBook(db);
  await prices.start();
  const usage = new UsageRecorder(usageConn, c.LLMGW_USAGE_BATCH, c.LLMGW_USAGE_FLUSH_MS, prices);
  const notifier = new Notifier(usageConn);
  setNotifier(notifier);
  const limitBook = new LimitBook(db);
  await limitBook.start();
  // Fails fast while Redis is away, so limits fall back to this process instead of waiting.
  const limitConn = redis(undefined, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 250 });
  limitConn.on("error", () => undefined);
  const limits = new Limiter(limitConn, limitBook, metrics.registry);
  metrics.watch({ registry, usage, keys });

  const clientDeps = { keys, batchKeys: new BatchKeys(db, clusterToken), batchLines: new BatchLines(usageConn, usage.journal.id), limits, registry, usage, metrics, waker, guard, cache, tokens: new TokenCounter(), bodyLimitBytes: 8 * 1024 * 1024, jobs: { db, temporal: temporal.client, dataDir: c.dataDir, taskQueue: c.LLMGW_TASK_QUEUE }, responses: new ResponseStore(db, c.LLMGW_RESPONSES_RETENTION_DAYS), scim: { db, redis: usageConn } };
  const sessions = new SessionStore(usageConn, { idleSeconds: c.LLMGW_SESSION_IDLE_SECONDS, maxSeconds: Math.max(c.LLMGW_SESSION_MAX_SECONDS, c.LLMGW_SESSION_IDLE_SECONDS) });
  // The Control service's certificate, and the CA it issues agents' from (docs/operations.md); the
  // admin API (an engine's log) and llmgw-admin's node_logs reach agents with it too, one client per node.
  const tls = await controlPlaneTlsFromConfig(c, db, clusterToken);
  const agents = new Map<string, AgentApi>();
  const agentFor = (node: NodeRef) => perNode(agents, node, (t) => agentClient(t, clusterToken, tls));
  const adminOpts = { db, redis: usageConn, temporal: temporal.client, taskQueue: c.LLMGW_TASK_QUEUE, registry, notifier, sessions, agentFor };
  // The same admin API on the client port for people (the console, `ctl login`): sessions only, never the admin token.
  const peopleAdmin = adminApi({ ...adminOpts, adminToken: null });
  // Sign-in (gateway/client-api/auth-routes.ts): redirect URIs are made from the public URL, by default this port's.
  let publicUrl = c.LLMGW_PUBLIC_URL ? new URL(c.LLMGW_PUBLIC_URL) : undefined;
  const providers = IdentityProviders.fromFile(c.LLMGW_SIGN_IN_FILE);
  const auth = authRoutes({ db, redis: usageConn, sessions, providers, publicUrl: () => publicUrl! });
  const clientApp = clientApi({ ...clientDeps, auth });
  const front = (req: http.IncomingMessage, res: http.ServerResponse) => (req.url === "/api/v1" || req.url?.startsWith("/api/v1/") || req.url?.startsWith("/api/v1?") ? peopleAdmin(req, res) : clientApp(req, res));
  const mcp = startMcp({
    db,
    redis: usageConn,
    keys,
    guard,
    metrics: metrics.registry,
    breakerMs: c.LLMGW_MCP_BREAKER_MS,
    stdioLifetimeMs: c.LLMGW_MCP_STDIO_LIFETIME_MS,
    admin: adminReads(db, temporal.client, agentFor),
    media: { jobs: clientDeps.jobs, guard, waker },
    oauth: { providers, resource: () => new URL("/mcp", publicUrl) },
  });
  const client = await listen(withMcp(mcp, withHotPath(clientDeps, front)), c.LLMGW_HOST, c.LLMGW_CLIENT_PORT);
  publicUrl ??= new URL(`http://${c.LLMGW_HOST.includes(":") ? `[${c.LLMGW_HOST}]` : c.LLMGW_HOST}:${portOf(client)}`);
  if (!c.LLMGW_PUBLIC_URL && c.LLMGW_SIGN_IN_FILE && !/^(127\.|localhost$|::1$)/.test(c.LLMGW_HOST)) log.warn("sign-in is configured but LLMGW_PUBLIC_URL is not: redirect URIs name this gateway's own address", { publicUrl: publicUrl.href });
  const admin = await listen(adminApi({ ...adminOpts, adminToken }), c.LLMGW_ADMIN_HOST, c.LLMGW_ADMIN_PORT);
  const metricsApp = express();
  metricsApp.get("/metrics", async (_req, res) => {
    res.set("content-type", metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  jsonFallbacks(metricsApp);
  const metricsServer = await listen(metricsApp, c.LLMGW_HOST, c.LLMGW_METRICS_PORT);
  const control = await startControlServer({ db, token: clusterToken, tls, host: c.LLMGW_HOST, port: c.LLMGW_CONTROL_PORT, heartbeatMs: c.LLMGW_HEARTBEAT_MS });

  const gw: Gateway = {
    clientPort: portOf(client),
    adminPort: portOf(admin),
    metricsPort: portOf(metricsServer),
    controlPort: control.port,
    async close() {
      await mcp.close();
      auth.close();
      await Promise.all([closeServer(client), closeServer(admin), closeServer(metricsServer), control.close()]);
      for (const a of agents.values()) a.close();
      tls?.close();
      await usage.close();
      setNotifier(null);
      await notifier.close();
      await registry.close();
      prices.close();
      limitBook.close();
      await limits.close();
      limitConn.disconnect();
      cacheConn.disconnect();
      sub.disconnect();
      weightsConn.disconnect();
      usageConn.disconnect();
      await temporal.close();
      await closePrisma();
    },
  };
  log.info("gateway listening", { client: gw.clientPort, admin: gw.adminPort, metrics: gw.metricsPort, control: gw.controlPort });
  return gw;
}
