// The stored responses of /v1/responses in the real PostgreSQL: read only by their project, gone
// once past the operator's retention (on read, and by the sweep a save starts), deleted once.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { loadConfig } from "../../common/config.ts";
import { closePrisma, prisma, type PrismaClient } from "../../common/db.ts";
import { migrate } from "../../common/migrate.ts";
import { waitFor } from "../../common/children.ts";
import { ResponseStore } from "../../gateway/client-api/responses/store.ts";

const url = loadConfig().databaseUrl;
let db: PrismaClient;
const projects: string[] = [];

const row = (text: string) => ({
  response: { object: "response", output_text: text },
  inputItems: [{ id: `msg_${text}`, type: "message", role: "user", content: [{ type: "input_text", text }] }],
  conversation: [{ role: "user" as const, content: text }],
});

describe("the response store", () => {
  before(async () => {
    await migrate(url);
    db = prisma(url);
    const org = await db.org.create({ data: { id: randomUUID(), name: `rs-${randomUUID()}` } });
    const team = await db.team.create({ data: { id: randomUUID(), orgId: org.id, name: "t" } });
    for (const name of ["a", "b"]) projects.push((await db.project.create({ data: { id: randomUUID(), teamId: team.id, name: `rs-${name}-${randomUUID()}` } })).id);
  });
  after(async () => {
    await closePrisma();
  });

  it("keeps a response for its project only, and deletes it once", async () => {
    const store = new ResponseStore(db, 30);
    const [mine, theirs] = projects as [string, string];
    const id = `resp_${randomUUID()}`;
    await store.save(mine, id, row("hello"));
    assert.deepEqual(await store.get(mine, id), row("hello"));
    assert.equal(await store.get(theirs, id), null);
    assert.equal(await store.delete(theirs, id), false);
    assert.equal(await store.delete(mine, id), true);
    assert.equal(await store.delete(mine, id), false);
    assert.equal(await store.get(mine, id), null);
  });

  it("reads a response past retention as gone and deletes it; a save sweeps the others", async () => {
    const store = new ResponseStore(db, 1);
    const [mine] = projects as [string];
    const old = [`resp_${randomUUID()}`, `resp_${randomUUID()}`];
    for (const id of old) await db.storedResponse.create({ data: { id, projectId: mine, ...row(id), createdAt: new Date(Date.now() - 2 * 86_400_000) } });
    assert.equal(await store.get(mine, old[0]!), null);
    assert.equal(await db.storedResponse.count({ where: { id: old[0]! } }), 0, "deleted when read");
    assert.equal(await store.delete(mine, old[1]!), false, "past retention: not there to delete");
    const fresh = `resp_${randomUUID()}`;
    await store.save(mine, fresh, row("new"));
    await waitFor("the sweep", async () => (await db.storedResponse.count({ where: { id: old[1]! } })) === 0, 10_000, 50);
    assert.deepEqual(await store.get(mine, fresh), row("new"));
  });

  it("says whether a project keeps nothing", async () => {
    const store = new ResponseStore(db, 30);
    const [mine] = projects as [string];
    assert.equal(await store.noStore(mine), false);
    await db.project.update({ where: { id: mine }, data: { noStore: true } });
    assert.equal(await store.noStore(mine), true);
  });
});
