// The cluster CA in PostgreSQL, shared by every control-plane process (gateways, workers, on any
// host): the first to start makes it; two starting together are settled by the primary key (the
// loser reads the winner's). A key that no longer opens means the cluster token changed: a new
// CA replaces the row (agents enrol again with the token by themselves) and a warning says so.
import type { PrismaClient } from "../db.ts";
import { log } from "../logging.ts";
import { createCa, type KeyAndCert } from "./certs.ts";
import { open, seal } from "./seal.ts";

const ROW = 1;

/** Prisma's "table does not exist": the store is not migrated yet. */
const notMigrated = (err: unknown) => (err as { code?: string }).code === "P2021";

/**
 * The cluster CA, made when there is none. A worker may start before the gateway has applied the
 * migrations (they start together in deploy/docker-compose.yml): it waits for them, up to `waitMs`.
 */
export async function clusterCa(db: PrismaClient, token: string, waitMs = 120_000): Promise<KeyAndCert> {
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      return await readOrMake(db, token);
    } catch (err) {
      if (!notMigrated(err) || Date.now() > until) throw err;
      log.warn("the store has no cluster_ca table yet: waiting for its migrations (llmgw migrate, or a gateway's start)");
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

async function readOrMake(db: PrismaClient, token: string): Promise<KeyAndCert> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const row = await db.clusterCa.findUnique({ where: { id: ROW } });
    if (!row) {
      const made = await createCa();
      await db.clusterCa.createMany({ data: [{ id: ROW, certPem: made.certPem, keySealed: seal(token, made.keyPem, made.certPem) }], skipDuplicates: true });
      continue; // read back whichever won
    }
    const keyPem = open(token, row.keySealed, row.certPem);
    if (keyPem !== null) return { certPem: row.certPem, keyPem };
    const made = await createCa();
    // Only over the row we could not open: a process that replaced it meanwhile wins.
    const { count } = await db.clusterCa.updateMany({
      where: { id: ROW, keySealed: row.keySealed },
      data: { certPem: made.certPem, keySealed: seal(token, made.keyPem, made.certPem), createdAt: new Date() },
    });
    if (count === 1) {
      log.warn("the cluster CA's key does not open with this cluster token (was it changed?): made a new cluster CA; agents enrol again with the token", {
        since: row.createdAt.toISOString(),
      });
    }
  }
  throw new Error("the cluster CA in the store keeps changing: are control-plane processes running with different cluster tokens?");
}
