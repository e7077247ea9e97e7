// A replica's GPUs reach the router's endpoint (chargeback's G, docs/people.md): from the store's
// placement at start, from the change feed's "ready", and from the store when a "ready" of an older
// publisher does not say.
import assert from "node:assert/strict";
import { it } from "node:test";
import { waitFor } from "../../common/children.ts";
import type { PrismaClient } from "../../common/db.ts";
import { EndpointRegistry } from "../../gateway/router/registry.ts";

const rows = [{ id: "placed", modelName: "m", version: { version: "1" }, nodeId: "n", url: "http://127.0.0.1:1", gpus: [0, 1, 2, 3] }];
const db = {
  replica: {
    findMany: async () => rows,
    findUnique: async ({ where }: { where: { id: string } }) => (where.id === "unsaid" ? { gpus: [4, 5] } : null),
  },
  model: { findMany: async () => [{ name: "m", providers: null }] },
} as unknown as PrismaClient;

it("each endpoint knows how many GPUs its replica holds", async () => {
  const registry = new EndpointRegistry(db, { engineKey: (id) => `key-${id}`, scrapeEveryMs: 60_000 });
  await registry.start();
  try {
    const gpus = (id: string) => registry.endpoints("m").find((e) => e.id === id)?.gpus;
    assert.equal(gpus("placed"), 4, "from the store at start");
    registry.apply({ kind: "replica", op: "ready", replica: { id: "told", model: "m", version: "1", nodeId: "n", url: "http://127.0.0.1:2", gpus: 1 } });
    assert.equal(gpus("told"), 1, "from the feed");
    registry.apply({ kind: "replica", op: "ready", replica: { id: "cpu", model: "m", version: "1", nodeId: "n", url: "http://127.0.0.1:3", gpus: 0 } });
    assert.equal(gpus("cpu"), 0, "a replica on no GPU");
    registry.apply({ kind: "replica", op: "ready", replica: { id: "unsaid", model: "m", version: "1", nodeId: "n", url: "http://127.0.0.1:4" } });
    await waitFor("the store's placement", async () => gpus("unsaid") === 2, 5_000, 10);
  } finally {
    await registry.close();
  }
});
