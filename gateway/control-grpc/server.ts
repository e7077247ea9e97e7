// The Control gRPC service: agents register here and send heartbeats with their inventory; the
// store's node rows (address, inventory, last seen) are what placement reads.
import * as grpc from "@grpc/grpc-js";
import type { PrismaClient } from "../../common/db.ts";
import { log } from "../../common/logging.ts";
import { agentProto, hasClusterToken, UNAUTHENTICATED, type ControlHandlers, type NodeInfo__Output } from "../../common/proto.ts";

export async function startControlServer(opts: { db: PrismaClient; token: string; host: string; port: number; heartbeatMs: number }) {
  const upsertNode = async (node: NodeInfo__Output | null) => {
    if (!node?.nodeId || !node.address) throw new Error("node_id and address are required");
    const { labels, ...inventory } = node;
    const data = { address: node.address, inventory: inventory as object, labels: labels as object, lastSeen: new Date() };
    await opts.db.node.upsert({ where: { id: node.nodeId }, create: { id: node.nodeId, ...data }, update: data });
  };
  const fail = (err: unknown) => ({ code: grpc.status.INVALID_ARGUMENT, details: (err as Error).message });

  const handlers: ControlHandlers = {
    Register(call, cb) {
      if (!hasClusterToken(call, opts.token)) return cb(UNAUTHENTICATED);
      upsertNode(call.request.node).then(
        () => {
          log.info("agent registered", { node: call.request.node?.nodeId, address: call.request.node?.address });
          cb(null, { heartbeatIntervalMs: opts.heartbeatMs });
        },
        (err) => cb(fail(err)),
      );
    },
    Heartbeat(call, cb) {
      if (!hasClusterToken(call, opts.token)) return cb(UNAUTHENTICATED);
      upsertNode(call.request.node).then(
        () => cb(null, {}),
        (err) => cb(fail(err)),
      );
    },
  };

  const server = new grpc.Server();
  server.addService(agentProto().Control.service, handlers);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${opts.host}:${opts.port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    port,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}
