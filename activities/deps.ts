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

/** One gRPC channel per agent address, reused across activities. */
export function agentAt(deps: ActivityDeps, address: string): AgentClient {
  let c = clients.get(address);
  if (!c) {
    c = agentClient(address, deps.clusterToken, deps.tls);
    clients.set(address, c);
  }
  return c;
}

export function closeAgentClients(): void {
  for (const c of clients.values()) c.close();
  clients.clear();
}
