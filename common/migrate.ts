// Applies the hand-written migrations under prisma/migrations/ (Prisma's layout) with plain `pg`,
// because Prisma's schema engine is not available everywhere llmgw runs. It keeps the same
// bookkeeping as `prisma migrate deploy` (the `_prisma_migrations` table, sha256 checksums, the
// same advisory lock), so either tool can take over from the other.
import { createHash, randomUUID } from "node:crypto";
import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { repoPath } from "./code-paths.ts";
import { log } from "./logging.ts";

/** prisma/migrations, found from the code rather than the working directory. */
export const MIGRATIONS_DIR = repoPath("prisma", "migrations") + path.sep;

/** The key Prisma's schema engine locks on Postgres, so we and `prisma migrate deploy` exclude each other. */
const ADVISORY_LOCK_KEY = 72707369;

// Prisma's own definition of its bookkeeping table.
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export interface LocalMigration {
  name: string;
  sql: string;
  checksum: string;
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
}

/** sha256 hex of a migration.sql's content, as Prisma records it. */
export function checksumOf(sql: string): string {
  return createHash("sha256").update(sql, "utf8").digest("hex");
}

/** The migration folders in name order, each with its SQL and checksum. */
export async function readMigrations(dir: string = MIGRATIONS_DIR): Promise<LocalMigration[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const lock = entries.find((e) => e.isFile() && e.name === "migration_lock.toml");
  if (lock) {
    const text = await readFile(path.join(dir, lock.name), "utf8");
    const provider = /^\s*provider\s*=\s*"([^"]*)"/m.exec(text)?.[1];
    if (provider !== undefined && provider !== "postgresql") {
      throw new Error(`${path.join(dir, lock.name)}: provider is "${provider}", expected "postgresql"`);
    }
  }
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const out: LocalMigration[] = [];
  for (const name of names) {
    const file = path.join(dir, name, "migration.sql");
    let sql: string;
    try {
      sql = await readFile(file, "utf8");
    } catch (err) {
      throw new Error(`migration ${name} has no readable migration.sql (${file}): ${(err as Error).message}`);
    }
    out.push({ name, sql, checksum: checksumOf(sql) });
  }
  return out;
}

/**
 * Brings the database at `databaseUrl` up to date with prisma/migrations and returns the names of
 * the migrations it applied (empty when there was nothing to do). Each migration runs in its own
 * transaction together with its `_prisma_migrations` row. Throws, applying nothing, when an
 * applied migration's file has changed since, or when a migration is recorded as started but
 * never finished (a failed `prisma migrate deploy`; resolve it with `prisma migrate resolve`).
 */
export async function migrate(
  databaseUrl: string,
  opts: { migrationsDir?: string } = {},
): Promise<string[]> {
  const local = await readMigrations(opts.migrationsDir);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  let locked = false;
  try {
    await client.query("SELECT pg_advisory_lock($1)", [ADVISORY_LOCK_KEY]);
    locked = true;
    await client.query(CREATE_MIGRATIONS_TABLE);

    const { rows } = await client.query<AppliedRow>(
      `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations"
        WHERE rolled_back_at IS NULL ORDER BY started_at, migration_name`,
    );
    const unfinished = rows.filter((r) => r.finished_at === null).map((r) => r.migration_name);
    if (unfinished.length > 0) {
      throw new Error(
        `migration(s) ${unfinished.join(", ")} started but did not finish on this database; ` +
          `inspect it, then mark them with \`prisma migrate resolve --applied|--rolled-back\``,
      );
    }
    const applied = new Map(rows.map((r) => [r.migration_name, r.checksum]));
    const changed = local.filter((m) => applied.has(m.name) && applied.get(m.name) !== m.checksum);
    if (changed.length > 0) {
      throw new Error(
        `migration(s) ${changed.map((m) => m.name).join(", ")} were modified after being applied ` +
          `(checksum in _prisma_migrations differs from migration.sql); restore the files and add a new migration instead`,
      );
    }

    const done: string[] = [];
    for (const m of local) {
      if (applied.has(m.name)) continue;
      try {
        await client.query("BEGIN");
        const id = randomUUID();
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), 0)`,
          [id, m.checksum, m.name],
        );
        await client.query(m.sql);
        await client.query(
          `UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1`,
          [id],
        );
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw new Error(`migration ${m.name} failed and was rolled back: ${(err as Error).message}`, { cause: err });
      }
      log.info("migration applied", { migration: m.name });
      done.push(m.name);
    }
    return done;
  } finally {
    if (locked) await client.query("SELECT pg_advisory_unlock($1)", [ADVISORY_LOCK_KEY]).catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}

/**
 * Creates the database `databaseUrl` names if it does not exist, connecting to the `postgres`
 * database on the same server (or `template1` where there is none). Returns whether it created it.
 */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, "")) || decodeURIComponent(url.username);
  if (!name) throw new Error("ensureDatabase: the URL names no database");

  let lastErr: unknown;
  for (const maintenance of ["postgres", "template1"]) {
    if (maintenance === name) return false;
    const admin = new URL(url.href);
    admin.pathname = `/${maintenance}`;
    const client = new pg.Client({ connectionString: admin.href });
    try {
      await client.connect();
    } catch (err) {
      lastErr = err;
      await client.end().catch(() => undefined);
      if ((err as { code?: string }).code === "3D000") continue; // that database does not exist
      throw err;
    }
    try {
      const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
      if (found.rowCount) return false;
      try {
        await client.query(`CREATE DATABASE ${quoteIdent(name)}`);
        return true;
      } catch (err) {
        // Another process created it between our check and our CREATE.
        const code = (err as { code?: string }).code;
        if (code === "42P04" || code === "23505") return false;
        throw err;
      }
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  throw lastErr;
}

function quoteIdent(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}
