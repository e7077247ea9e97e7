// The Control gRPC service: agents register here and send heartbeats with their inventory; the
// store's node rows (address, inventory, last seen) are what placement reads. Over mutual TLS
// (tls null: plaintext) a client certificate is asked for but not required, so an agent can
// enrol (enrolment.ts); Register and Heartbeat need the certificate of the node they name.
import * as grpc from "@grpc/grpc-js";
import type { PrismaClient } from "../../common/db.ts";
import { log } from "../../common/logging.ts";
import { agentProto, hasClusterToken, UNAUTHENTICATED, type ControlHandlers, type NodeInfo__Output } from "../../common/proto.ts";
import type { ControlPlaneTls } from "../../common/tls/control-plane.ts";
import { serverCredentials } from "../../common/tls/credentials.ts";
import { enrolmentHandlers, refuseUnlessNode } from "./enrolment.ts";

export async function startControlServer(opts: { db: PrismaClient; token: string; tls: ControlPlaneTls | null; host: string; port: number; heartbeatMs: number }) {
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
      const refused = refuseUnlessNode(opts.tls, call, call.request.node?.nodeId);
      if (refused) return cb(refused);
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
      const refused = refuseUnlessNode(opts.tls, call, call.request.node?.nodeId);
      if (refused) return cb(refused);
      upsertNode(call.request.node).then(
        () => cb(null, {}),
        (err) => cb(fail(err)),
      );
    },
    ...enrolmentHandlers({ tls: opts.tls, token: opts.token }),
  };

  const server = new grpc.Server();
  server.addService(agentProto().Control.service, handlers);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${opts.host}:${opts.port}`, serverCredentials(opts.tls, false), (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    port,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}
