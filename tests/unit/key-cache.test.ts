// The key cache with the store away: a key it knew keeps serving past its entry's lifetime (and the
// store is asked again only after a pause); a key it never saw fails; an evicted (revoked) key is
// not brought back.
import assert from "node:assert/strict";
import { describe, it, mock } from "node:test";
import type { PrismaClient } from "../../common/db.ts";
import { sha256Hex } from "../../common/secrets.ts";
import { KeyCache } from "../../gateway/auth/key-cache.ts";

const row = { id: "k1", projectId: "p1", models: [], band: "interactive", expiresAt: null, revokedAt: null, project: { teamId: "t1", team: { orgId: "o1" } } };

function store() {
  const s = { down: false, reads: 0 };
  const db = {
    apiKey: {
      findUnique: async () => {
        s.reads++;
        if (s.down) throw new Error("connect ECONNREFUSED 127.0.0.1:5432");
        return row;
      },
    },
  } as unknown as PrismaClient;
  return { s, db };
}

describe("the key cache while the store is away", () => {
  it("serves a known key past its lifetime, asking the store again only after a pause", async () => {
    mock.timers.enable({ apis: ["Date"], now: 0 });
    try {
      const { s, db } = store();
      const keys = new KeyCache(db);
      assert.equal((await keys.lookup("sk-a"))?.id, "k1");
      s.down = true;
      mock.timers.tick(61_000);
      assert.equal((await keys.lookup("sk-a"))?.id, "k1");
      assert.equal(keys.staleServed, 1);
      const reads = s.reads;
      assert.equal((await keys.lookup("sk-a"))?.id, "k1");
      assert.equal(s.reads, reads, "within the pause: from memory");
      mock.timers.tick(2_500);
      await keys.lookup("sk-a");
      assert.equal(s.reads, reads + 1);
    } finally {
      mock.timers.reset();
    }
  });

  it("trusts a found key for its given lifetime (LLMGW_KEY_CACHE_MS), then reads it again", async () => {
    mock.timers.enable({ apis: ["Date"], now: 0 });
    try {
      const { s, db } = store();
      const keys = new KeyCache(db, 10_000);
      await keys.lookup("sk-c");
      mock.timers.tick(9_000);
      await keys.lookup("sk-c");
      assert.equal(s.reads, 1, "within its lifetime: from memory");
      mock.timers.tick(2_000);
      await keys.lookup("sk-c");
      assert.equal(s.reads, 2);
    } finally {
      mock.timers.reset();
    }
  });

  it("fails a key it never saw, and does not bring back an evicted one", async () => {
    const { s, db } = store();
    const keys = new KeyCache(db);
    await keys.lookup("sk-b");
    s.down = true;
    await assert.rejects(keys.lookup("sk-new"), /ECONNREFUSED/);
    keys.evict(sha256Hex("sk-b"));
    await assert.rejects(keys.lookup("sk-b"), /ECONNREFUSED/);
  });
});
