// The admin API over real PostgreSQL and Redis, in this process, with people signed in: each test
// gets a person per role (sessions made by the real SessionStore) and calls routes as any of them.
// Temporal and the router are not there: a route that reaches them answers 500, which the role
// tests count as "let through" (only a 401 or the role check's 403 is a refusal).
import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Redis } from "ioredis";
import { loadConfig } from "../../common/config.ts";
import { prisma, type PrismaClient } from "../../common/db.ts";
import { migrate } from "../../common/migrate.ts";
import { redis as redisClient } from "../../common/redis.ts";
import { adminApi } from "../../gateway/admin-api/app.ts";
import type { EndpointRegistry } from "../../gateway/router/registry.ts";
import { SessionStore } from "../../gateway/people/sessions.ts";

export const ADMIN_TOKEN = `roles-test-${randomUUID()}`;

export interface Answer {
  status: number;
  body: { error?: { message: string; field: string | null } } & Record<string, unknown>;
}

export interface PeopleAdmin {
  db: PrismaClient;
  redis: Redis;
  sessions: SessionStore;
  /** The admin port (admin token and sessions) and the client port's copy (sessions only). */
  base: string;
  peopleBase: string;
  /** A person with these memberships (scope names resolved to ids), and a session of theirs. */
  person(name: string, grants: { scope: string; scopeId?: string | null; role: string }[]): Promise<{ id: string; token: string; csrf: string }>;
  call(auth: string | null, method: string, path: string, body?: unknown, extra?: Record<string, string>, at?: string): Promise<Answer>;
  close(): Promise<void>;
}

const listen = (app: ReturnType<typeof adminApi>) =>
  new Promise<Server>((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });

export async function startPeopleAdmin(): Promise<PeopleAdmin> {
  const c = loadConfig();
  await migrate(c.databaseUrl);
  const db = prisma(c.databaseUrl);
  const redis = redisClient(c.redisUrl);
  const sessions = new SessionStore(redis);
  // No Temporal, notifier or router here: a route that needs them fails inside, after the role check.
  const opts = { db, redis, sessions, temporal: {}, taskQueue: "roles-test", registry: {} as EndpointRegistry, notifier: {} } as unknown as Parameters<typeof adminApi>[0];
  const servers = [await listen(adminApi({ ...opts, adminToken: ADMIN_TOKEN })), await listen(adminApi({ ...opts, adminToken: null }))];
  const url = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  const base = url(servers[0]!);
  return {
    db,
    redis,
    sessions,
    base,
    peopleBase: url(servers[1]!),
    async person(name, grants) {
      const p = await db.person.create({ data: { id: randomUUID(), name, email: `${name}-${randomUUID()}@example.test` } });
      for (const g of grants) await db.membership.create({ data: { id: randomUUID(), personId: p.id, scope: g.scope, scopeId: g.scopeId ?? null, role: g.role } });
      const { token, session } = await sessions.create(p.id, "test");
      return { id: p.id, token, csrf: session.csrf };
    },
    async call(auth, method, path, body, extra = {}, at = base) {
      const headers: Record<string, string> = { ...extra };
      if (auth) headers.authorization = `Bearer ${auth}`;
      if (body !== undefined) headers["content-type"] = "application/json";
      const r = await fetch(`${at}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) });
      const text = await r.text();
      let parsed: Answer["body"] = {};
      try {
        parsed = text ? (JSON.parse(text) as Answer["body"]) : {};
      } catch {
        parsed = { text };
      }
      return { status: r.status, body: parsed };
    },
    async close() {
      await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
      redis.disconnect();
      await db.$disconnect();
    },
  };
}

/** Two orgs, each with a team, a project, a key, limits and usage rows; names unique to this run. */
export async function twoOrgs(db: PrismaClient) {
  const tag = randomUUID().slice(0, 8);
  const make = async (letter: string) => {
    const org = await db.org.create({ data: { id: randomUUID(), name: `org-${letter}-${tag}` } });
    const team = await db.team.create({ data: { id: randomUUID(), orgId: org.id, name: "t" } });
    const project = await db.project.create({ data: { id: randomUUID(), teamId: team.id, name: `proj-${letter}-${tag}` } });
    const key = await db.apiKey.create({ data: { id: randomUUID(), projectId: project.id, hash: randomUUID(), prefix: "sk-test" } });
    await db.limit.create({ data: { id: randomUUID(), scope: "project", scopeId: project.id, rpm: 10 } });
    await db.limit.create({ data: { id: randomUUID(), scope: "org", scopeId: org.id, rpm: 100 } });
    await db.usageEvent.create({ data: { id: randomUUID(), at: new Date(), keyId: key.id, projectId: project.id, model: "m", endpoint: "/v1/chat/completions", latencyMs: 1, status: 200, promptTokens: 3 } });
    return { org, team, project, key, teamPath: `${org.name}/t` };
  };
  return { a: await make("a"), b: await make("b") };
}
