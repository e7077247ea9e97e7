// The store at install time: before anything is written, PostgreSQL answers and the database is
// there or can be made (the doctor's own check when it is there); then the database is made where
// missing and brought up to date with the migrations the gateway applies at its start (common/migrate.ts).
import pg from "pg";
import { ensureDatabase, migrate, readMigrations } from "../../common/migrate.ts";
import { redact, fail, ok, within, type Check } from "../../doctor/finding.ts";
import { postgres } from "../../doctor/postgres.ts";

export function storeCheck(databaseUrl: string): Check {
  return {
    name: "postgres",
    roles: ["control"],
    async run(ctx) {
      const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: ctx.timeoutMs });
      try {
        await within(ctx.timeoutMs, "PostgreSQL", client.connect());
      } catch (err) {
        if ((err as { code?: string }).code !== "3D000") return postgres.run({ ...ctx, env: { ...ctx.env, DATABASE_URL: databaseUrl } });
        return canCreate(databaseUrl, ctx.timeoutMs);
      } finally {
        await client.end().catch(() => undefined);
      }
      return postgres.run({ ...ctx, env: { ...ctx.env, DATABASE_URL: databaseUrl } });
    },
  };
}

/** The database is missing: whether this role may create it, from the server's maintenance database. */
async function canCreate(databaseUrl: string, timeoutMs: number) {
  const admin = new URL(databaseUrl);
  const name = decodeURIComponent(admin.pathname.slice(1));
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.href, connectionTimeoutMillis: timeoutMs });
  try {
    await within(timeoutMs, "PostgreSQL", client.connect());
    const r = await client.query<{ v: string; may: boolean }>("SELECT current_setting('server_version') AS v, (rolcreatedb OR rolsuper) AS may FROM pg_roles WHERE rolname = current_user");
    const row = r.rows[0];
    if (!row?.may) return fail(`PostgreSQL at ${redact(databaseUrl)} has no database "${name}", and this role may not create one`, `create it: createdb -O ${decodeURIComponent(admin.username) || "llmgw"} ${name}`);
    return ok(`PostgreSQL ${row.v} at ${redact(databaseUrl)}: the database "${name}" will be created`);
  } catch (err) {
    return fail(`PostgreSQL at ${redact(databaseUrl)} has no database "${name}" and its postgres database cannot be reached: ${(err as Error).message}`, "create the database, or give a role that may (CREATEDB)");
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Makes the database where missing and applies every migration; what was done, in words. */
export async function setUpStore(databaseUrl: string): Promise<string> {
  const created = await ensureDatabase(databaseUrl);
  const applied = await migrate(databaseUrl);
  const total = (await readMigrations()).length;
  return `${created ? "database created; " : ""}${applied.length} migration(s) applied, ${total} in all`;
}
