// The store's client. One PrismaClient per database URL per process, over node-postgres through
// @prisma/adapter-pg (Prisma 7 has no query engine binary). Migrations are applied by
// common/migrate.ts, not here.
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/prisma/client.ts";
import { config } from "./config.ts";

export { PrismaClient, Prisma } from "./generated/prisma/client.ts";
export type {
  Node,
  Model,
  ModelVersion,
  Replica,
  Org,
  Team,
  Project,
  ApiKey,
  UsageEvent,
  Job,
  File,
  Batch,
} from "./generated/prisma/client.ts";

const clients = new Map<string, PrismaClient>();

/** The process's client for `databaseUrl` (default: the configured DATABASE_URL), made on first use. */
export function prisma(databaseUrl?: string): PrismaClient {
  const connectionString = databaseUrl ?? config().databaseUrl;
  let client = clients.get(connectionString);
  if (!client) {
    client = new PrismaClient({ adapter: new PrismaPg({ connectionString }) });
    clients.set(connectionString, client);
  }
  return client;
}

/** Disconnects every client this process made; a later prisma() call makes a fresh one. */
export async function closePrisma(): Promise<void> {
  const all = [...clients.values()];
  clients.clear();
  await Promise.allSettled(all.map((c) => c.$disconnect()));
}
