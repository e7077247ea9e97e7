// What activities need from the outside world, made once per worker process.
import type { Redis } from "ioredis";
import type { PrismaClient } from "../common/db.ts";
import { agentClient } from "../agent/client.ts";
import type { GrpcTls } from "../common/tls/credentials.ts";

export interface ActivityDeps {
  db: PrismaClient;
  redis: Redis;
  clusterToken: string;
  /** The process's TLS toward agents (its control-plane certificate); null: plaintext (LLMGW_INSECURE_GRPC=1). */
  tls: GrpcTls | null;
  /** A node is placeable only if its agent was heard from this recently. */
  nodeFreshMs: number;
}

type AgentClient = ReturnType<typeof agentClient>;
const clients = new Map<string, AgentClient>();

/** A node as the store knows it: the agent at `address` must hold `id`'s certificate. */
export interface NodeRef {
  id: string;
  address: string;
}

/** One client per node and address, cached for the process; made by `make` the first time. */
export function perNode<C>(cache: Map<string, C>, node: NodeRef, make: (target: { address: string; nodeId: string }) => C): C {
  const k = `${node.id}@${node.address}`;
  let c = cache.get(k);
  if (!c) cache.set(k, (c = make({ address: node.address, nodeId: node.id })));
  return c;
}

/** One gRPC channel per node, reused across activities; the agent must prove it is that node. */
export function agentAt(deps: ActivityDeps, node: NodeRef): AgentClient {
  return perNode(clients, node, (t) => agentClient(t, deps.clusterToken, deps.tls));
}

export function closeAgentClients(): void {
  for (const c of clients.values()) c.close();
  clients.clear();
}
