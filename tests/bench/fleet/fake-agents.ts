// Many simulated node agents in one process, for the fleet benchmark: each serves the real Agent
// gRPC service (cluster token checked on every call) on its own loopback port and registers and
// heartbeats through the real Control link (agent/control-client.ts) with 8 H100-like GPUs.
// StartReplica is idempotent on the replica id and the replica is READY at once; every replica's
// url is one shared in-process sim (instant answers), so hundreds of replicas cost nothing.
// Calls no benchmark needs (Fetch, Logs, Slurm, training) answer UNIMPLEMENTED. Plaintext gRPC
// (the platform runs with LLMGW_INSECURE_GRPC=1).
import * as grpc from "@grpc/grpc-js";
import { agentProto, hasClusterToken, UNAUTHENTICATED, type AgentHandlers, type NodeInfo, type ReplicaStatus } from "../../../common/proto.ts";
import { startControlLink, type ControlLink } from "../../../agent/control-client.ts";
import { startSim, type SimHandle } from "../../../agent/engines/sim/server.ts";

const REPLICA_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const H100_MIB = 80 * 1024;

export interface FakeFleetOptions {
  nodes: number;
  gpusPerNode: number;
  controlAddress: string;
  token: string;
  heartbeatMs: number;
  /** Node ids are <prefix>-<n>. */
  prefix: string;
}

export interface FakeFleet {
  nodeIds: string[];
  /** Replicas running now, over all nodes. */
  running(): number;
  /** Replicas started on GPUs another running replica of the same node already held. */
  gpuConflicts: number;
  /** The most running replicas sharing one GPU now (1 when placement never double-books). */
  maxPerGpu(): number;
  calls: Record<string, number>;
  registered: Promise<void>;
  close(): Promise<void>;
}

interface FakeNode {
  id: string;
  server: grpc.Server;
  link: ControlLink;
  replicas: Map<string, ReplicaStatus>;
}

export async function startFakeFleet(o: FakeFleetOptions): Promise<FakeFleet> {
  const sim: SimHandle = await startSim({ port: 0, host: "127.0.0.1", model: "fleet-sim", slots: 100_000 });
  const simUrl = `http://127.0.0.1:${sim.port}`;
  const calls: Record<string, number> = { Describe: 0, StartReplica: 0, StopReplica: 0, ListReplicas: 0 };
  const nodes: FakeNode[] = [];
  const fleet: FakeFleet = {
    nodeIds: [],
    running: () => nodes.reduce((n, x) => n + [...x.replicas.values()].filter((r) => r.state !== "REPLICA_STATE_EXITED").length, 0),
    gpuConflicts: 0,
    maxPerGpu() {
      let most = 0;
      for (const n of nodes) {
        const count = new Map<number, number>();
        for (const r of n.replicas.values()) if (r.state !== "REPLICA_STATE_EXITED") for (const g of r.gpus ?? []) count.set(g, (count.get(g) ?? 0) + 1);
        most = Math.max(most, ...count.values());
      }
      return most;
    },
    calls,
    registered: Promise.resolve(),
    async close() {
      for (const n of nodes) n.link.close();
      await Promise.all(nodes.map((n) => new Promise<void>((resolve) => n.server.tryShutdown(() => resolve()))));
      await sim.close();
    },
  };

  const gpus = Array.from({ length: o.gpusPerNode }, (_, i) => ({
    index: i,
    name: "NVIDIA H100 80GB HBM3 (simulated)",
    uuid: "",
    memoryTotalMib: H100_MIB,
    memoryUsedMib: 0,
    computeCapability: "9.0",
    driverVersion: "550.54.15",
  }));

  for (let i = 0; i < o.nodes; i++) {
    const id = `${o.prefix}-${String(i).padStart(3, "0")}`;
    const replicas = new Map<string, ReplicaStatus>();
    const server = new grpc.Server();
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
    );
    const address = `127.0.0.1:${port}`;
    const describe = async (): Promise<NodeInfo> => ({
      nodeId: id,
      address,
      cpuModel: "simulated",
      cpuCores: 64,
      memoryTotalBytes: 1024 ** 4,
      diskFreeBytes: 4 * 1024 ** 4,
      gpus: gpus.map((g) => ({ ...g, uuid: `GPU-${id}-${g.index}` })),
      labels: {},
      agentVersion: "fake",
    });
    const live = () => [...replicas.values()].filter((r) => r.state !== "REPLICA_STATE_EXITED");

    const unary =
      <Req, Res>(method: string, fn: (req: Req) => Res): grpc.handleUnaryCall<Req, Res> =>
      (call, cb) => {
        calls[method] = (calls[method] ?? 0) + 1;
        if (!hasClusterToken(call, o.token)) return cb(UNAUTHENTICATED);
        try {
          cb(null, fn(call.request));
        } catch (err) {
          cb(err as grpc.ServiceError);
        }
      };
    const unimplemented = (_call: unknown, cb: (e: { code: grpc.status; details: string }) => void) =>
      cb({ code: grpc.status.UNIMPLEMENTED, details: "not simulated by the fleet benchmark's agents" });
    const unimplementedStream = (call: grpc.ServerWritableStream<unknown, unknown>) =>
      call.emit("error", { code: grpc.status.UNIMPLEMENTED, details: "not simulated by the fleet benchmark's agents" });

    const handlers: AgentHandlers = {
      Describe: (call, cb) => {
        calls.Describe! += 1;
        if (!hasClusterToken(call, o.token)) return cb(UNAUTHENTICATED);
        void describe().then((n) => cb(null, n));
      },
      StartReplica: unary("StartReplica", (req) => {
        if (!REPLICA_ID.test(req.replicaId)) throw { code: grpc.status.INVALID_ARGUMENT, details: `replica_id "${req.replicaId}" is not valid` };
        if (!req.model) throw { code: grpc.status.INVALID_ARGUMENT, details: "model is required" };
        const existing = replicas.get(req.replicaId);
        if (existing && existing.state !== "REPLICA_STATE_EXITED") return existing;
        const held = new Set(live().flatMap((r) => r.gpus ?? []));
        if (req.gpus.some((g) => held.has(g))) fleet.gpuConflicts += 1;
        const status: ReplicaStatus = {
          replicaId: req.replicaId,
          model: req.model,
          version: req.version,
          engine: req.engine,
          port: sim.port,
          url: simUrl,
          pid: process.pid,
          state: "REPLICA_STATE_READY",
          exitCode: 0,
          gpus: [...req.gpus],
          startedAtMs: Date.now(),
        };
        replicas.set(req.replicaId, status);
        return status;
      }),
      StopReplica: unary("StopReplica", (req) => {
        if (!req.replicaId) throw { code: grpc.status.INVALID_ARGUMENT, details: "replica_id is required" };
        const r = replicas.get(req.replicaId);
        replicas.delete(req.replicaId);
        return { wasRunning: !!r && r.state !== "REPLICA_STATE_EXITED" };
      }),
      ListReplicas: unary("ListReplicas", () => ({ replicas: [...replicas.values()] })),
      Drain: unimplemented,
      Fetch: unimplementedStream,
      Logs: unimplementedStream,
      SlurmDescribe: unimplemented,
      SlurmResume: unimplemented,
      SlurmDrain: unimplemented,
      SlurmRequeue: unimplemented,
      StartTrainer: unimplemented,
      GetTrainer: unimplemented,
      CancelTrainer: unimplemented,
      ReadArtifact: unimplemented,
      PutAdapter: unimplemented,
      LoadAdapter: unimplemented,
    };
    server.addService(agentProto().Agent.service, handlers);
    const link = startControlLink({ address: o.controlAddress, token: o.token, tls: null, heartbeatMs: o.heartbeatMs, node: describe, replicas: live });
    nodes.push({ id, server, link, replicas });
    fleet.nodeIds.push(id);
  }
  fleet.registered = Promise.all(nodes.map((n) => n.link.registered)).then(() => undefined);
  return fleet;
}
