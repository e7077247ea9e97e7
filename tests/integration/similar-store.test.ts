// The similar answer cache's store in the real PostgreSQL with pgvector: the nearest answer of the
// same project and prefix key by cosine similarity, never another project's, gone past its TTL.
// And a database where the extension cannot be made (here: its owner is no superuser, as on an
// outside PostgreSQL without pgvector): the migrations run, the store says it is off, and is not
// asked again within the minute.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { loadConfig } from "../../common/config.ts";
import { prisma, type PrismaClient } from "../../common/db.ts";
import { migrate } from "../../common/migrate.ts";
import { SimilarStore } from "../../gateway/cache/similar-store.ts";

const url = loadConfig().databaseUrl;
const answer = (text: string) => ({ contentType: "application/json", stream: false, chunks: [text] });
const ROLE = "llmgw_no_pgvector";

async function admin(sql: string): Promise<void> {
  const u = new URL(url);
  u.pathname = "/postgres";
  const c = new pg.Client({ connectionString: u.toString() });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

describe("the similar answer cache's store", () => {
  let db: PrismaClient;
  let plain: PrismaClient | null = null;
  const plainUrl = new URL(url);
  plainUrl.username = ROLE;
  plainUrl.pathname = `/${new URL(url).pathname.slice(1)}_nopgv`;
  const plainDb = plainUrl.pathname.slice(1);

  before(async () => {
    await migrate(url);
    db = prisma(url);
  });
  after(async () => {
    await db?.$disconnect();
    await plain?.$disconnect();
    await admin(`DROP DATABASE IF EXISTS "${plainDb}" WITH (FORCE)`).catch(() => undefined);
  });

  it("serves the nearest answer of the same project and prefix only, while it lives", async () => {
    const store = new SimilarStore(db);
    assert.equal(await store.ready(), true);
    const p = `proj-${Date.now()}`;
    await store.insert(p, "prefix", [1, 0, 0], answer("paris"), 600);
    await store.insert(p, "prefix", [0, 1, 0], answer("berlin"), 600);
    const near = await store.nearest(p, "prefix", [0.9, 0.1, 0]);
    assert.deepEqual(near?.answer, answer("paris"));
    assert.ok(near!.similarity > 0.99 && near!.similarity <= 1, String(near!.similarity));
    assert.equal(await store.nearest(`${p}-other`, "prefix", [1, 0, 0]), null);
    assert.equal(await store.nearest(p, "another-prefix", [1, 0, 0]), null);
    // Another embedding model's dimensions are never compared.
    assert.equal(await store.nearest(p, "prefix", [1, 0, 0, 0]), null);
    await store.insert(p, "short", [1, 0, 0], answer("gone"), 1);
    await new Promise((res) => setTimeout(res, 1_200));
    assert.equal(await store.nearest(p, "short", [1, 0, 0]), null);
  });

  it("is off, without failing, where pgvector cannot be made", async () => {
    await admin(`DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${ROLE}') THEN CREATE ROLE ${ROLE} LOGIN NOSUPERUSER; END IF; END $$`);
    await admin(`DROP DATABASE IF EXISTS "${plainDb}" WITH (FORCE)`);
    await admin(`CREATE DATABASE "${plainDb}" OWNER ${ROLE}`);
    await migrate(plainUrl.toString());
    plain = prisma(plainUrl.toString());
    let asked = 0;
    const counting = new Proxy(plain, {
      get(target, prop, recv) {
        if (prop === "$executeRawUnsafe") asked++;
        return Reflect.get(target, prop, recv) as unknown;
      },
    });
    const store = new SimilarStore(counting);
    assert.equal(await store.ready(), false);
    const first = asked;
    assert.ok(first > 0);
    assert.equal(await store.ready(), false);
    assert.equal(asked, first, "not asked again within the minute");
    const tables = await plain.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'answer_cache_settings'");
    assert.equal(tables[0]?.n, 1, "the migrations ran without pgvector");
  });
});
