// The store: the hand-written migrations under prisma/migrations/ against the Prisma schema.
// On a scratch database on DATABASE_URL's server it proves that migrate() applies them once (also
// when two processes race), that every model and every scalar field of the generated client
// round-trips through the tables the migrations made (so a model or field added to schema.prisma
// without a migration and a fixture in tests/fixtures/store-rows.ts fails), that the columns'
// defaults, types and cascades are there, and that migrate() refuses a tampered or half-applied
// history.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import pg from "pg";
import type { RuntimeDataModel } from "@prisma/client/runtime/client";
import { checksumOf, ensureDatabase, migrate, readMigrations } from "../../common/migrate.ts";
import { closePrisma, prisma, Prisma, type PrismaClient } from "../../common/db.ts";
import { loadConfig } from "../../common/config.ts";
import { NOW, fixtures, type Fixture, type ModelName } from "../fixtures/store-rows.ts";

/** Prisma scalar type -> Postgres type (udt_name) that Prisma's migrations give it. */
const PG_TYPE: Record<string, string> = {
  String: "text",
  Int: "int4",
  BigInt: "int8",
  Float: "float8",
  Boolean: "bool",
  DateTime: "timestamp",
  Json: "jsonb",
};

interface Delegate {
  create(args: { data: Record<string, unknown> }): Promise<Record<string, unknown>>;
  findUniqueOrThrow(args: { where: Record<string, unknown> }): Promise<Record<string, unknown>>;
  delete(args: { where: Record<string, unknown> }): Promise<Record<string, unknown>>;
  count(): Promise<number>;
}

const serverUrl = process.env.DATABASE_URL ?? loadConfig().databaseUrl;
const scratchName = `llmgw_store_${randomBytes(6).toString("hex")}`;
const scratchUrl = (() => {
  const u = new URL(serverUrl);
  u.pathname = `/${scratchName}`;
  return u.href;
})();

let client: PrismaClient;
let sql: pg.Client;

/** The generated client's runtime data model: every model with its fields, their types and column names. */
function runtimeDataModel(c: PrismaClient): RuntimeDataModel {
  // Each client instance carries the model the generator embedded (config.runtimeDataModel in
  // common/generated/prisma/internal/class.ts); the runtime declares it as `_runtimeDataModel`.
  const rdm = (c as unknown as { _runtimeDataModel?: RuntimeDataModel })._runtimeDataModel;
  assert.ok(rdm?.models, "the Prisma client exposes no _runtimeDataModel; find where this Prisma version keeps it");
  return rdm;
}

function scalarFields(rdm: RuntimeDataModel, model: string) {
  const m = rdm.models[model];
  assert.ok(m, `model ${model} is missing from the runtime data model`);
  return m.fields.filter((f) => f.kind === "scalar" || f.kind === "enum");
}

function delegate(model: ModelName): Delegate {
  const prop = model[0]!.toLowerCase() + model.slice(1);
  const d = (client as unknown as Record<string, Delegate | undefined>)[prop];
  assert.ok(d, `the client has no delegate ${prop} for model ${model}`);
  return d;
}

/** Models in an order where every model comes after the models it references. */
function creationOrder(): ModelName[] {
  const out: ModelName[] = [];
  const visit = (m: ModelName, path: ModelName[]) => {
    if (out.includes(m)) return;
    assert.ok(!path.includes(m), `fixture parents form a cycle: ${[...path, m].join(" -> ")}`);
    const f = fixtures[m] as Fixture<ModelName> | undefined;
    assert.ok(f, `no fixture for model ${m}`);
    for (const p of f.parents) visit(p, [...path, m]);
    out.push(m);
  };
  for (const m of Object.keys(fixtures) as ModelName[]) visit(m, []);
  return out;
}

function fixture(m: ModelName): Fixture<ModelName> {
  return fixtures[m] as unknown as Fixture<ModelName>;
}

before(async () => {
  assert.equal(await ensureDatabase(scratchUrl), true, `${scratchName} should not exist yet`);
  assert.equal(await ensureDatabase(scratchUrl), false, "a second ensureDatabase creates nothing");
  sql = new pg.Client({ connectionString: scratchUrl });
  await sql.connect();
  client = prisma(scratchUrl);
});

after(async () => {
  await closePrisma();
  await sql?.end().catch(() => undefined);
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${scratchName}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
});

test("migrate applies every migration once, also when two processes start together", async () => {
  const local = await readMigrations();
  const names = local.map((m) => m.name);
  assert.ok(names.includes("20261130000000_init"), `init migration missing from ${names.join(", ")}`);

  const [a, b] = await Promise.all([migrate(scratchUrl), migrate(scratchUrl)]);
  const results = [a, b].sort((x, y) => x.length - y.length);
  assert.deepEqual(results, [[], names], "one of two racing migrate() calls applies everything, the other nothing");
  assert.deepEqual(await migrate(scratchUrl), [], "a later migrate() applies nothing");

  const { rows } = await sql.query(
    `SELECT migration_name, checksum, finished_at, rolled_back_at, applied_steps_count, logs
       FROM _prisma_migrations ORDER BY migration_name`,
  );
  assert.equal(rows.length, local.length);
  for (const [i, m] of local.entries()) {
    const r = rows[i];
    assert.equal(r.migration_name, m.name);
    assert.equal(r.checksum, checksumOf(m.sql));
    assert.match(r.checksum, /^[0-9a-f]{64}$/);
    assert.ok(r.finished_at instanceof Date, `${m.name} is recorded as finished`);
    assert.equal(r.rolled_back_at, null);
    assert.equal(r.applied_steps_count, 1);
  }
});

test("the migrated tables match the generated client's runtime data model", async () => {
  const rdm = runtimeDataModel(client);
  const modelNames = Object.values(Prisma.ModelName).sort();
  assert.deepEqual(Object.keys(rdm.models).sort(), modelNames, "Prisma.ModelName and the runtime data model agree");
  assert.deepEqual(Object.keys(fixtures).sort(), modelNames, "every model has a fixture in this test");

  const { rows } = await sql.query<{ table_name: string; column_name: string; udt_name: string; datetime_precision: number | null }>(
    `SELECT table_name, column_name, udt_name, datetime_precision
       FROM information_schema.columns WHERE table_schema = current_schema()`,
  );
  const tables = new Map<string, typeof rows>();
  for (const r of rows) tables.set(r.table_name, [...(tables.get(r.table_name) ?? []), r]);
  const expectedTables = modelNames.map((m) => rdm.models[m]!.dbName ?? m);
  assert.deepEqual([...tables.keys()].filter((t) => t !== "_prisma_migrations").sort(), [...expectedTables].sort());

  for (const m of modelNames) {
    const table = rdm.models[m]!.dbName ?? m;
    const fields = scalarFields(rdm, m);
    const columns = tables.get(table) ?? [];
    assert.deepEqual(
      columns.map((c) => c.column_name).sort(),
      fields.map((f) => f.dbName ?? f.name).sort(),
      `columns of ${table} are exactly ${m}'s scalar fields`,
    );
    const full = fixture(m).full as Record<string, unknown>;
    for (const f of fields) {
      const col = columns.find((c) => c.column_name === (f.dbName ?? f.name))!;
      const isList = f.type !== "Json" && Array.isArray(full[f.name]);
      assert.equal(col.udt_name, (isList ? "_" : "") + PG_TYPE[f.type], `${table}.${col.column_name} type for ${f.type}${isList ? "[]" : ""}`);
      if (f.type === "DateTime") assert.equal(col.datetime_precision, 3, `${table}.${col.column_name} is TIMESTAMP(3)`);
    }
  }
});

test("every model round-trips every scalar field", async () => {
  const rdm = runtimeDataModel(client);
  const order = creationOrder();
  assert.deepEqual([...order].sort(), Object.values(Prisma.ModelName).sort());

  for (const m of order) {
    const names = scalarFields(rdm, m).map((f) => f.name).sort();
    const enumNames = Object.values((Prisma as unknown as Record<string, Record<string, string>>)[`${m}ScalarFieldEnum`] ?? {}).sort();
    assert.deepEqual(enumNames, names, `Prisma.${m}ScalarFieldEnum agrees with the runtime data model`);
    const f = fixture(m);
    assert.deepEqual(Object.keys(f.full).sort(), names, `the ${m} fixture sets every scalar field`);
    for (const [k, v] of Object.entries(f.full)) assert.notEqual(v, null, `${m}.${k} is set to a value, not null`);
    assert.deepEqual(
      [...Object.keys(f.minimal), ...Object.keys(f.defaults)].sort(),
      names,
      `the ${m} fixture's minimal row plus its defaults cover every scalar field`,
    );
  }

  // Full rows, parents first; read back; then deleted, children first.
  for (const m of order) {
    const f = fixture(m);
    const data = f.full as Record<string, unknown>;
    const created = await delegate(m).create({ data });
    assert.deepEqual({ ...created }, data, `${m}: create returns what was written`);
    const read = await delegate(m).findUniqueOrThrow({ where: { [f.key]: data[f.key] } });
    assert.deepEqual({ ...read }, data, `${m}: read back equals what was written`);
  }
  for (const m of [...order].reverse()) {
    const f = fixture(m);
    const key = (f.full as Record<string, unknown>)[f.key];
    await delegate(m).delete({ where: { [f.key]: key } });
    assert.equal(await delegate(m).count(), 0, `${m}: deleted`);
  }

  // Minimal rows: what the schema does not require comes back as its default (or null).
  // Parents of minimal rows are the full fixtures, so create those first.
  for (const m of order) {
    await delegate(m).create({ data: fixture(m).full as Record<string, unknown> });
  }
  for (const m of order) {
    const f = fixture(m);
    const minimal = f.minimal as Record<string, unknown>;
    const started = Date.now();
    await delegate(m).create({ data: minimal });
    const read = await delegate(m).findUniqueOrThrow({ where: { [f.key]: minimal[f.key] } });
    for (const [k, v] of Object.entries(minimal)) assert.deepEqual(read[k], v, `${m}.${k}`);
    for (const [k, v] of Object.entries(f.defaults)) {
      if (v === NOW) {
        assert.ok(read[k] instanceof Date, `${m}.${k} defaults to a time`);
        assert.ok(Math.abs((read[k] as Date).getTime() - started) < 60_000, `${m}.${k} defaults to now`);
      } else {
        assert.deepEqual(read[k], v, `${m}.${k} defaults to ${String(v)}`);
      }
    }
  }

  // Deleting the rows nothing references cascades to every row that references them.
  for (const m of order.filter((x) => fixture(x).parents.length === 0)) {
    for (const row of [fixture(m).full, fixture(m).minimal] as Record<string, unknown>[]) {
      const key = fixture(m).key;
      await delegate(m).delete({ where: { [key]: row[key] } });
    }
  }
  for (const m of order) assert.equal(await delegate(m).count(), 0, `${m}: gone by cascade`);
});

test("migrate refuses a changed or half-applied migration history", async () => {
  const [first] = await readMigrations();
  assert.ok(first);
  const { rows } = await sql.query<{ id: string; checksum: string }>(
    `SELECT id, checksum FROM _prisma_migrations WHERE migration_name = $1`,
    [first.name],
  );
  const row = rows[0]!;

  await sql.query(`UPDATE _prisma_migrations SET checksum = $1 WHERE id = $2`, ["0".repeat(64), row.id]);
  await assert.rejects(migrate(scratchUrl), (err: Error) => {
    assert.match(err.message, /modified after being applied/);
    assert.ok(err.message.includes(first.name), err.message);
    return true;
  });
  await sql.query(`UPDATE _prisma_migrations SET checksum = $1 WHERE id = $2`, [row.checksum, row.id]);

  await sql.query(`UPDATE _prisma_migrations SET finished_at = NULL WHERE id = $1`, [row.id]);
  await assert.rejects(migrate(scratchUrl), /started but did not finish/);
  await sql.query(`UPDATE _prisma_migrations SET finished_at = now() WHERE id = $1`, [row.id]);

  assert.deepEqual(await migrate(scratchUrl), [], "a restored history migrates cleanly again");
});
