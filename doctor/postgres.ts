// PostgreSQL: the store answers, and its migrations are all applied.
import pg from "pg";
import { loadConfig } from "../common/config.ts";
import { readMigrations } from "../common/migrate.ts";
import { fail, ok, redact, warn, within, type Check } from "./finding.ts";

export const postgres: Check = {
  name: "postgres",
  roles: ["control"],
  async run(ctx) {
    const url = loadConfig(ctx.env).databaseUrl;
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: ctx.timeoutMs, query_timeout: ctx.timeoutMs });
    try {
      await within(ctx.timeoutMs, "PostgreSQL", client.connect());
    } catch (err) {
      return fail(`PostgreSQL at ${redact(url)} is not reachable: ${(err as Error).message}`, "start it (bash scripts/services.sh start, or the postgres service) or set DATABASE_URL");
    }
    try {
      const v = await client.query<{ server_version: string }>("SHOW server_version");
      const version = v.rows[0]?.server_version ?? "?";
      const known = await readMigrations();
      const table = await client.query<{ t: string | null }>(`SELECT to_regclass('_prisma_migrations')::text AS t`);
      if (!table.rows[0]?.t) return warn(`PostgreSQL ${version} at ${redact(url)}: the store is empty`, "llmgw migrate (the gateway also migrates when it starts)");
      const done = await client.query<{ migration_name: string }>("SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL");
      const applied = new Set(done.rows.map((r) => r.migration_name));
      const missing = known.filter((m) => !applied.has(m.name)).map((m) => m.name);
      if (missing.length) return warn(`PostgreSQL ${version}: ${missing.length} migration(s) not applied (${missing.join(", ")})`, "llmgw migrate");
      return ok(`PostgreSQL ${version} at ${redact(url)}, ${known.length} migrations applied`);
    } finally {
      await client.end().catch(() => undefined);
    }
  },
};
