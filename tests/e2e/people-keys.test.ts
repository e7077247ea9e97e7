// People through a whole platform: the admin API on the client port takes a person's session and
// refuses the admin token; a person makes their own key there, asks a model with it through the
// official openai client, and the ledger's row carries the person; disabled through the admin port,
// the person's key is refused by the gateway within seconds and their session is a 401.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { waitFor } from "../../common/children.ts";
import { prisma, closePrisma, type PrismaClient } from "../../common/db.ts";
import { redis as redisClient } from "../../common/redis.ts";
import { SessionStore } from "../../gateway/people/sessions.ts";
import { startPlatform, uniqueModel, type Platform } from "../helpers/platform.ts";

describe("a person's session and own key through the gateway", () => {
  let p: Platform;
  let db: PrismaClient;
  const model = uniqueModel("e2e-people");
  let person: string;
  let session: string;

  before(async () => {
    p = await startPlatform();
    await p.serve(model);
    await p.newKey({ project: "people" });
    db = prisma(p.env.DATABASE_URL);
    const project = await db.project.findUniqueOrThrow({ where: { name: "people" } });
    person = (await db.person.create({ data: { id: randomUUID(), name: "Grace", email: `grace-${randomUUID()}@example.test` } })).id;
    await db.membership.create({ data: { id: randomUUID(), personId: person, scope: "project", scopeId: project.id, role: "member" } });
    // As sign-in would: a session in the platform's Redis.
    const r = redisClient(p.env.REDIS_URL);
    session = (await new SessionStore(r).create(person, "test")).token;
    r.disconnect();
  });
  after(async () => {
    await closePrisma();
    await p?.stop();
  });

  const client = (path: string, token: string, init: RequestInit = {}) =>
    fetch(`${p.clientUrl}/api/v1${path}`, { ...init, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...(init.headers ?? {}) } });

  it("serves a person on the client port, makes their key, and ends both when they are disabled", async () => {
    const glass = await client("/projects", p.adminToken);
    assert.equal(glass.status, 401, "the admin token is refused on the client port");
    const me = await client("/me", session);
    assert.equal(me.status, 200);
    assert.equal(((await me.json()) as { person: { id: string } }).person.id, person);

    const made = await client("/me/keys", session, { method: "POST", body: JSON.stringify({ project: "people", name: "notebook" }) });
    assert.equal(made.status, 201);
    const key = (await made.json()) as { id: string; key: string };
    const openai = new OpenAI({ baseURL: `${p.clientUrl}/v1`, apiKey: key.key, maxRetries: 0 });
    const ask = () => openai.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 4 });
    await ask();
    const row = await waitFor("the usage row", () => db.usageEvent.findFirst({ where: { keyId: key.id } }), 30_000, 200);
    assert.equal(row.personId, person, "the ledger names the person");

    const off = await p.admin<{ disabled: boolean }>("POST", `/people/${person}/disable`, {});
    assert.equal(off.disabled, true);
    await waitFor("the gateway to refuse the key", () => ask().then(() => false, (e: unknown) => e instanceof OpenAI.AuthenticationError), 5_000, 50);
    assert.equal((await client("/me", session)).status, 401);
    const audit = await db.auditEvent.findFirstOrThrow({ where: { action: "person.disable", target: `person/${person}` } });
    assert.equal(audit.actor, "admin-token");
  });
});
