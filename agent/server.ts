// The node agent: serves the Agent gRPC service (inventory, engine processes, weight fetch) and
// reports to the Control service. Nothing runs on import; `llmgw agent` calls startAgent().
//
// Every call must come over mutual TLS from the control plane (agent/enrol.ts gets the node its
// certificate) and carry the cluster token (LLMGW_CLUSTER_TOKEN, else <dataDir>/cluster-token, made
// at first start with mode 0600 — the gateway reads the same file, so a local setup agrees).
// Engines outlive the agent: close() leaves them running unless LLMGW_AGENT_STOP_ENGINES_ON_EXIT=1,
// and the next agent on the same data directory adopts them.
import fs from "node:fs";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import { config } from "../common/config.ts";
import { log } from "../common/logging.ts";
import { agentProto, hasClusterToken, UNAUTHENTICATED, type AgentHandlers, type NodeInfo } from "../common/proto.ts";
import { readOrCreateSecret } from "../common/secrets.ts";
import { inventory, parseLabels } from "./discovery/inventory.ts";
import { ReplicaError, Supervisor } from "./supervisor/replicas.ts";
import { resolveEngineUser } from "./supervisor/engine-user.ts";
import { startMemoryReadMeter } from "./discovery/memory-read.ts";
import { FetchError } from "./fetch/errors.ts";
import { Drains, drainRequestSchema } from "./drain.ts";
import { followLog } from "./supervisor/log-follow.ts";
import { Fetcher } from "./fetch/fetcher.ts";
import { startControlLink, type ControlLink } from "./control-client.ts";
import { agentTls } from "./enrol.ts";
import { peerIdentities, plaintextGrpc, serverCredentials } from "../common/tls/credentials.ts";
import { isControl } from "../common/tls/identity.ts";
import { tlsFilesFrom, type TlsFiles } from "../common/tls/operator-files.ts";
import { AgentMetrics } from "./metrics.ts";
import { serveMetrics, type MetricsServer } from "../common/metrics-server.ts";
import { slurmHandlers, SlurmError } from "./slurm/handlers.ts";
import { SlurmNode } from "./slurm/node.ts";
import { trainHandlers } from "./train/handlers.ts";
import { TrainerError, Trainers } from "./train/trainers.ts";
import { adapterHandlers } from "./adapters/handlers.ts";
import { engineAuth, engineKey } from "../common/engine-key.ts";
import { clusterNetworksSchema, keepFirewall, nodePorts } from "./firewall.ts";
import { AdapterError, AdapterStore } from "./adapters/store.ts";
import { REPO_ROOT } from "../common/code-paths.ts";

const NODE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/;

export interface AgentOptions {
  dataDir: string;
  nodeId: string;
  /** Interface the gRPC server binds. */
  host: string;
  /** 0 picks a free port; the bound one is returned. */
  port: number;
  /** host:port the control plane reaches this agent at; default 127.0.0.1:<port>. */
  advertiseAddress: string | undefined;
  /** Control service address; null runs the agent without reporting anywhere. */
  controlAddress: string | null;
  /** The cluster token; default LLMGW_CLUSTER_TOKEN, else the <dataDir>/cluster-token file. */
  clusterToken: string | undefined;
  heartbeatMs: number;
  /** Port of /metrics (0 picks a free one); null serves none. */
  metricsPort: number | null;
  enginePortMin: number;
  enginePortMax: number;
  stopEnginesOnExit: boolean;
  labels: Record<string, string>;
  /** Where the engines' sources are (engines start with this working directory). */
  repoRoot: string;
  /** Whether this node takes part in Slurm (its node name there is nodeId). */
  slurm: boolean;
  /** The trainer this node runs: "lora" or the GPU-less "standin". */
  trainer: string;
  /** The user engines run as (LLMGW_ENGINE_USER); undefined: the agent's own. */
  engineUser: string | undefined;
  /** The interface engines listen on (LLMGW_ENGINE_HOST); undefined: the advertised address's host. */
  engineHost: string | undefined;
  /** Plaintext gRPC, token only (LLMGW_INSECURE_GRPC=1). */
  insecureGrpc: boolean;
  /** The operator's CA and certificate files (LLMGW_TLS_*), instead of enrolling. */
  tlsFiles: TlsFiles;
  /** LLMGW_FIREWALL: "nftables" keeps this node's ports to the cluster's networks (agent/firewall.ts). */
  firewall: "off" | "nftables";
  /** LLMGW_CLUSTER_NETWORKS: a comma list of CIDRs; required with the firewall. */
  clusterNetworks: string | undefined;
  /** Slurm's ports, kept to the cluster too on a Slurm node. */
  slurmPorts: number[];
}

export interface RunningAgent {
  port: number;
  /** The advertised host:port. */
  address: string;
  nodeId: string;
  /** The bound /metrics port; null when none is served. */
  metricsPort: number | null;
  close(): Promise<void>;
}

function defaults(): AgentOptions {
  const c = config();
  return {
    dataDir: c.dataDir,
    nodeId: c.LLMGW_NODE_ID,
    host: c.LLMGW_HOST,
    port: c.LLMGW_AGENT_PORT,
    advertiseAddress: c.LLMGW_AGENT_ADDRESS,
    controlAddress: c.LLMGW_CONTROL_ADDRESS,
    clusterToken: c.LLMGW_CLUSTER_TOKEN,
    heartbeatMs: c.LLMGW_HEARTBEAT_MS,
    metricsPort: c.LLMGW_AGENT_METRICS_PORT,
    enginePortMin: c.LLMGW_ENGINE_PORT_MIN,
    enginePortMax: c.LLMGW_ENGINE_PORT_MAX,
    stopEnginesOnExit: c.LLMGW_AGENT_STOP_ENGINES_ON_EXIT === "1",
    labels: parseLabels(process.env.LLMGW_NODE_LABELS),
    repoRoot: REPO_ROOT,
    slurm: c.LLMGW_SLURM_ENABLED === "1",
    trainer: c.LLMGW_TRAINER,
    engineUser: c.LLMGW_ENGINE_USER,
    engineHost: c.LLMGW_ENGINE_HOST,
    insecureGrpc: c.LLMGW_INSECURE_GRPC === "1",
    tlsFiles: tlsFilesFrom(c),
    firewall: c.LLMGW_FIREWALL,
    clusterNetworks: c.LLMGW_CLUSTER_NETWORKS,
    slurmPorts: c.LLMGW_SLURM_PORTS,
  };
}

/** The cluster token: the given one, else <dataDir>/cluster-token (created, 0600, when missing). */
export function clusterToken(dataDir: string, given?: string): string {
  const token = readOrCreateSecret(dataDir, "cluster-token", given);
  if (!token) throw new Error(`the cluster token is empty (LLMGW_CLUSTER_TOKEN or ${path.join(dataDir, "cluster-token")})`);
  return token;
}

function agentVersion(repoRoot: string): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")) as { version?: unknown };
    return typeof pkg.version === "string" ? pkg.version : "unknown";
  } catch {
    return "unknown";
  }
}

/** The host part of host:port, "[v6]:port" included. */
export function hostOf(address: string): string {
  const v6 = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (v6) return v6[1]!;
  const i = address.lastIndexOf(":");
  return i < 0 ? address : address.slice(0, i);
}

function bindAddress(host: string, port: number): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]:${port}` : `${host}:${port}`;
}

export async function startAgent(opts?: Partial<AgentOptions>): Promise<RunningAgent> {
  const o: AgentOptions = { ...defaults(), ...Object.fromEntries(Object.entries(opts ?? {}).filter(([, v]) => v !== undefined)) };
  if (!NODE_ID.test(o.nodeId)) throw new Error(`LLMGW_NODE_ID "${o.nodeId}" must be letters, digits, ".", "_" or "-"`);
  const dataDir = path.resolve(o.dataDir);
  fs.mkdirSync(dataDir, { recursive: true });
  const token = clusterToken(dataDir, o.clusterToken);
  const engineUser = resolveEngineUser(o.engineUser);
  const version = agentVersion(o.repoRoot);
  // The node's certificate, enrolling in the background when it has none yet (agent/enrol.ts).
  const tls = plaintextGrpc(o.insecureGrpc ? "1" : "0")
    ? null
    : await agentTls({ dir: path.join(dataDir, "agent", o.nodeId, "tls"), nodeId: o.nodeId, token, controlAddress: o.controlAddress, files: o.tlsFiles });
  // Callers need the cluster token and, over TLS, a control-plane certificate: the handshake has
  // already refused any without one from the CA; a node's certificate gets this far and no further.
  const refusal = (call: Parameters<typeof peerIdentities>[0] & { metadata: grpc.Metadata }) => {
    if (!hasClusterToken(call, token)) return UNAUTHENTICATED;
    if (tls && !peerIdentities(call).some(isControl)) return { code: grpc.status.PERMISSION_DENIED, details: "only the control plane (spiffe://llmgw/control) calls an agent" };
    return null;
  };

  const server = new grpc.Server();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(bindAddress(o.host, o.port), serverCredentials(tls, true), (err, p) => (err ? reject(err) : resolve(p))),
  );
  const address = o.advertiseAddress || `127.0.0.1:${port}`;

  let supervisor: Supervisor;
  try {
    supervisor = new Supervisor({
      dir: path.join(dataDir, "agent", o.nodeId),
      portMin: o.enginePortMin,
      portMax: o.enginePortMax,
      repoRoot: o.repoRoot,
      urlHost: hostOf(address),
      // Where the control plane reaches this node, and nowhere else unless the operator says so.
      engineHost: o.engineHost || hostOf(address),
      engineKey: (id) => engineKey(token, id),
      engineUser,
    });
    await supervisor.adoptExisting();
  } catch (err) {
    server.forceShutdown();
    tls?.close();
    throw err;
  }

  const memoryRead = startMemoryReadMeter();
  const fetcher = new Fetcher(path.join(dataDir, "weights"), engineUser?.gid ?? null);
  // The agent's own calls to its engines (drain's metrics, adapter loads) carry each replica's key.
  const engineHeaders = (id: string) => engineAuth(token, id);
  const drains = new Drains(engineHeaders);
  /** Replicas as reported to callers and the control plane: drained ones DRAINING. */
  const replicas = () => drains.overlay(supervisor.list());
  const metrics = new AgentMetrics(replicas);
  let metricsServer: MetricsServer | null = null;
  if (o.metricsPort !== null) {
    // Metrics are not worth losing a node over: a taken port is logged, the agent runs on.
    metricsServer = await serveMetrics(metrics.registry, o.host, o.metricsPort).catch((err: Error) => {
      log.error("agent metrics not served", { port: o.metricsPort, error: err.message });
      return null;
    });
  }

  let stopFirewall: (() => void) | null = null;
  if (o.firewall === "nftables") {
    const networks = clusterNetworksSchema.safeParse(o.clusterNetworks ?? "");
    const ports = nodePorts({ enginePortMin: o.enginePortMin, enginePortMax: o.enginePortMax, agentPort: port, metricsPort: metricsServer?.port ?? null, slurmPorts: o.slurm ? o.slurmPorts : [] });
    try {
      if (!networks.success) throw new Error(`LLMGW_CLUSTER_NETWORKS: ${networks.error.issues[0]?.message} (needed with LLMGW_FIREWALL=nftables)`);
      // A firewall asked for and not in place must not leave the node open: no start without it.
      stopFirewall = await keepFirewall({ ports, networks: networks.data }, (msg, fields) => log.warn(msg, fields));
    } catch (err) {
      server.forceShutdown();
      await metricsServer?.close();
      throw new Error(`the firewall could not be set up: ${(err as Error).message}`);
    }
    log.info("firewall in place", { table: "inet llmgw", ports: ports.map(([a, b]) => (a === b ? a : `${a}-${b}`)), networks: networks.data });
  }

  const slurm = o.slurm ? new SlurmNode(o.nodeId) : null;
  const trainers = new Trainers({ dir: path.join(dataDir, "agent", o.nodeId, "train"), repoRoot: o.repoRoot, trainer: o.trainer });
  const describe = async (): Promise<NodeInfo> => {
    const [node, slurmStatus] = await Promise.all([
      inventory({ nodeId: o.nodeId, address, dataDir, labels: o.labels, agentVersion: version, memoryReadGbps: memoryRead.best() }),
      slurm?.describe(),
    ]);
    return slurmStatus ? { ...node, slurm: slurmStatus } : node;
  };

  const fail = (err: unknown, method: string): grpc.ServiceError | { code: grpc.status; details: string } => {
    if (err instanceof ReplicaError || err instanceof FetchError || err instanceof SlurmError || err instanceof TrainerError || err instanceof AdapterError) return { code: err.code, details: err.message };
    log.error("agent call failed", { method, err: err as Error });
    return { code: grpc.status.INTERNAL, details: (err as Error)?.message ?? String(err) };
  };

  const unary =
    <Req, Res>(method: string, fn: (req: Req) => Promise<Res>): grpc.handleUnaryCall<Req, Res> =>
    (call, cb) => {
      const refused = refusal(call);
      if (refused) return cb(refused);
      fn(call.request).then(
        (res) => cb(null, res),
        (err) => cb(fail(err, method)),
      );
    };

  const handlers: AgentHandlers = {
    Describe: unary("Describe", () => describe()),
    StartReplica: unary("StartReplica", (req) => {
      metrics.starting(req.replicaId, req.engine, supervisor.list());
      return supervisor.start(req);
    }),
    StopReplica: unary("StopReplica", async (req) => {
      const wasRunning = await supervisor.stop(req.replicaId, req.graceMs);
      drains.forget(req.replicaId);
      return { wasRunning };
    }),
    ListReplicas: unary("ListReplicas", async () => ({ replicas: replicas() })),
    Drain: (call, cb) => {
      const refused = refusal(call);
      if (refused) return cb(refused);
      const req = drainRequestSchema.safeParse(call.request);
      if (!req.success) return cb({ code: grpc.status.INVALID_ARGUMENT, details: req.error.issues.map((i) => i.message).join("; ") });
      // A caller that gives up (deadline, cancel) ends the wait; the mark stays.
      const ac = new AbortController();
      call.on("cancelled", () => ac.abort());
      drains.drain(supervisor.list().find((r) => r.replicaId === req.data.replicaId), req.data.graceMs, ac.signal).then(
        (res) => cb(null, res),
        (err) => cb(fail(err, "Drain")),
      );
    },
    ...slurmHandlers(slurm, unary),
    ...trainHandlers(trainers, unary),
    ...adapterHandlers(new AdapterStore(path.join(dataDir, "agent", o.nodeId, "adapters")), () => supervisor.list(), engineHeaders, unary),
    Fetch: (call) => {
      const refused = refusal(call);
      if (refused) {
        call.emit("error", refused);
        return;
      }
      const counted = metrics.fetch((p) => {
        if (!call.cancelled) call.write(p);
      });
      fetcher.fetch(call.request, counted.progress).then(
        () => {
          counted.end();
          call.end();
        },
        (err) => {
          counted.end();
          call.emit("error", fail(err, "Fetch"));
        },
      );
    },
    Logs: (call) => {
      const refused = refusal(call);
      if (refused) {
        call.emit("error", refused);
        return;
      }
      const { replicaId, tailBytes, follow } = call.request;
      const file = supervisor.knownLogPath(replicaId);
      if (!file) {
        call.emit("error", { code: grpc.status.NOT_FOUND, details: `no log for replica "${replicaId}" on this node` });
        return;
      }
      const ac = new AbortController();
      call.on("cancelled", () => ac.abort());
      void (async () => {
        for await (const data of followLog(file, { tailBytes: tailBytes > 0 ? tailBytes : 64 << 10, follow, signal: ac.signal })) {
          if (!call.write({ data })) await new Promise((resolve) => call.once("drain", resolve));
        }
      })().then(
        () => call.end(),
        (err) => call.emit("error", fail(err, "Logs")),
      );
    },
  };
  server.addService(agentProto().Agent.service, handlers);

  let control: ControlLink | undefined;
  if (o.controlAddress) {
    control = startControlLink({
      address: o.controlAddress,
      token,
      tls,
      heartbeatMs: o.heartbeatMs,
      node: describe,
      replicas,
      delivered: (replicas) => supervisor.reported(replicas.map((r) => r.replicaId ?? "")),
    });
    // For `llmgw node join`, which waits until the control plane has this node: Register succeeded.
    const marker = path.join(dataDir, "agent", o.nodeId, "registered");
    void control.registered
      .then(() => fs.promises.mkdir(path.dirname(marker), { recursive: true }))
      .then(() => fs.promises.writeFile(marker, JSON.stringify({ control: o.controlAddress, at: new Date().toISOString() }) + "\n"))
      .catch(() => undefined);
  }

  log.info("agent listening", { nodeId: o.nodeId, listen: bindAddress(o.host, port), address, control: o.controlAddress, metrics: metricsServer?.port ?? null });

  let closing: Promise<void> | undefined;
  return {
    port,
    address,
    nodeId: o.nodeId,
    metricsPort: metricsServer?.port ?? null,
    close() {
      closing ??= (async () => {
        control?.close();
        tls?.close();
        // The table stays: the engines go on running after the agent, and so does their protection.
        stopFirewall?.();
        memoryRead.stop();
        await metricsServer?.close();
        await new Promise<void>((resolve) => {
          const force = setTimeout(() => {
            server.forceShutdown();
            resolve();
          }, 5000);
          force.unref();
          server.tryShutdown(() => {
            clearTimeout(force);
            resolve();
          });
        });
        await supervisor.close(o.stopEnginesOnExit);
        log.info("agent stopped", { nodeId: o.nodeId, enginesStopped: o.stopEnginesOnExit });
      })();
      return closing;
    },
  };
}
