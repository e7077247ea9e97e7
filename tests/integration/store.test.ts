// The store: the hand-written migrations under prisma/migrations/ against the Prisma schema.
// On a scratch database on DATABASE_URL's server it proves that migrate() applies them once (also
// when two processes race), that every model and every scalar field of the generated client
// round-trips through the tables the migrations made (so a model or field added to
// schema.prisma without a migration and a fixture here fails), that the columns' defaults,
// types and cascades are there, and that migrate() refuses a tampered or half-applied history.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import pg from "pg";
import type { RuntimeDataModel } from "@prisma/client/runtime/client";
import { checksumOf, ensureDatabase, migrate, readMigrations } from "../../common/migrate.ts";
import { closePrisma, prisma, Prisma, type PrismaClient } from "../../common/db.ts";
import { loadConfig } from "../../common/config.ts";

type ModelName = Prisma.ModelName;
/** A row of model M as the client returns it: every scalar field, nullable ones as `T | null`. */
type Row<M extends ModelName> = Prisma.TypeMap["model"][M]["payload"]["scalars"];

/** Marks a default that is "the time of the insert". */
const NOW = Symbol("now");

interface Fixture<M extends ModelName> {
  /** Models whose rows this one references; they are created first. */
  parents: ModelName[];
  /** The primary key field. */
  key: keyof Row<M> & string;
  /** Every scalar field set (the type makes the compiler list them all, too). */
  full: Row<M>;
  /** Only what the schema requires; `defaults` is what every other field must read back as. */
  minimal: Partial<Row<M>>;
  defaults: { [K in keyof Row<M>]?: Row<M>[K] | typeof NOW };
}

const t0 = new Date("2026-11-30T12:34:56.789Z");
const t1 = new Date("2026-12-01T01:02:03.456Z");
const t2 = new Date("2027-01-01T00:00:00.001Z");

const fixtures: { [M in ModelName]: Fixture<M> } = {
  Node: {
    parents: [],
    key: "id",
    full: {
      id: "node-a",
      address: "10.0.0.1:7070",
      inventory: { gpus: [{ index: 0, name: "NVIDIA H100", memoryMiB: 81559, cc: "9.0" }], cpus: 64 },
      labels: { zone: "a", "gpu.kind": "h100" },
      cordoned: true,
      lastSeen: t1,
      createdAt: t0,
    },
    minimal: { id: "node-b", address: "10.0.0.2:7070" },
    defaults: { inventory: {}, labels: {}, cordoned: false, lastSeen: NOW, createdAt: NOW },
  },
  Model: {
    parents: [],
    key: "name",
    full: {
      name: "llama-3-8b",
      routingProfile: "long-context",
      profiles: [{ name: "default", replicas: 2, gpus: 1 }],
      prices: { inputPerMTokMicros: 100000, outputPerMTokMicros: 200000 },
      owner: "team-ml",
      licence: "llama3",
      allowPickle: true,
      minReplicas: 3,
      idleAfterMs: 600000,
      wakeWaitMs: 90000,
      providers: [{ name: "openai", base_url: "https://api.example.com/v1", model: "gpt-x", keys_file: "/etc/llmgw/openai.keys", weight: 2, slots: 32 }],
      fallbacks: ["qwen-2-7b", "kong-gpt"],
      createdAt: t0,
      updatedAt: t1,
    },
    minimal: { name: "qwen-2-7b" },
    defaults: {
      routingProfile: "chat",
      profiles: [],
      prices: {},
      owner: "llmgw",
      licence: null,
      allowPickle: false,
      minReplicas: 1,
      idleAfterMs: null,
      wakeWaitMs: null,
      providers: [],
      fallbacks: [],
      createdAt: NOW,
      updatedAt: NOW,
    },
  },
  ModelVersion: {
    parents: ["Model"],
    key: "id",
    full: {
      id: "mv-a",
      modelName: "llama-3-8b",
      version: "2026-11",
      source: { kind: "hf", repo: "meta-llama/Meta-Llama-3-8B-Instruct", revision: "abc123" },
      engine: "vllm",
      args: ["--max-model-len", "8192"],
      contextLength: 8192,
      maxOutput: 2048,
      memory: { weights_gb: 15, layers: 32, kv_heads: 8, head_dim: 128, kv_cache_dtype_bytes: 2, concurrent_sequences: 4 },
      createdAt: t0,
    },
    minimal: { id: "mv-b", modelName: "llama-3-8b", version: "2026-12", engine: "sim" },
    defaults: { source: {}, args: [], contextLength: 4096, maxOutput: 1024, memory: null, createdAt: NOW },
  },
  Replica: {
    parents: ["Model", "ModelVersion", "Node"],
    key: "id",
    full: {
      id: "rep-a",
      modelName: "llama-3-8b",
      versionId: "mv-a",
      nodeId: "node-a",
      gpus: [0, 3],
      port: 18001,
      url: "http://10.0.0.1:18001",
      state: "ready",
      createdAt: t0,
      updatedAt: t1,
    },
    minimal: { id: "rep-b", modelName: "llama-3-8b", versionId: "mv-a", nodeId: "node-a", port: 18002, url: "http://10.0.0.1:18002" },
    defaults: { gpus: [], state: "starting", createdAt: NOW, updatedAt: NOW },
  },
  Org: {
    parents: [],
    key: "id",
    full: { id: "org-a", name: "Acme", createdAt: t0 },
    minimal: { id: "org-b", name: "Globex" },
    defaults: { createdAt: NOW },
  },
  Team: {
    parents: ["Org"],
    key: "id",
    full: { id: "team-a", orgId: "org-a", name: "research", createdAt: t0 },
    minimal: { id: "team-b", orgId: "org-a", name: "platform" },
    defaults: { createdAt: NOW },
  },
  Project: {
    parents: ["Team"],
    key: "id",
    full: { id: "proj-a", teamId: "team-a", name: "chatbot", createdAt: t0 },
    minimal: { id: "proj-b", teamId: "team-a", name: "search" },
    defaults: { createdAt: NOW },
  },
  ApiKey: {
    parents: ["Project"],
    key: "id",
    full: {
      id: "key-a",
      projectId: "proj-a",
      name: "ci",
      hash: "ab".repeat(32),
      prefix: "sk-llmgw-ab12",
      models: ["llama-3-8b", "qwen-2-7b"],
      band: "batch",
      expiresAt: t2,
      revokedAt: t1,
      createdAt: t0,
    },
    minimal: { id: "key-b", projectId: "proj-a", hash: "cd".repeat(32), prefix: "sk-llmgw-cd34" },
    defaults: { name: null, models: [], band: "interactive", expiresAt: null, revokedAt: null, createdAt: NOW },
  },
  UsageEvent: {
    parents: [],
    key: "id",
    full: {
      id: "evt-a",
      at: t1,
      keyId: "key-a",
      projectId: "proj-a",
      model: "llama-3-8b",
      version: "2026-11",
      replicaId: "rep-a",
      endpoint: "/v1/chat/completions",
      promptTokens: 1234,
      cachedTokens: 512,
      completionTokens: 321,
      costMicros: 9_007_199_254_740_993n, // past 2^53: a BIGINT, not a double
      latencyMs: 812.25,
      ttftMs: 97.5,
      status: 200,
    },
    minimal: { id: "evt-b", at: t1, model: "llama-3-8b", endpoint: "/v1/messages", latencyMs: 1.5, status: 429 },
    defaults: {
      keyId: null,
      projectId: null,
      version: null,
      replicaId: null,
      promptTokens: 0,
      cachedTokens: 0,
      completionTokens: 0,
      costMicros: 0n,
      ttftMs: null,
    },
  },
  Job: {
    parents: [],
    key: "id",
    full: {
      id: "job-a",
      kind: "picture",
      model: "sdxl",
      projectId: "proj-a",
      state: "running",
      progress: { step: 3, of: 20 },
      input: { prompt: "a lighthouse at dusk", width: 1024, height: 1024 },
      resultId: "file-a",
      error: "engine restarted once",
      createdAt: t0,
      updatedAt: t1,
    },
    minimal: { id: "job-b", kind: "3d", model: "trellis" },
    defaults: {
      projectId: null,
      state: "queued",
      progress: {},
      input: {},
      resultId: null,
      error: null,
      createdAt: NOW,
      updatedAt: NOW,
    },
  },
  File: {
    parents: [],
    key: "id",
    full: {
      id: "file-a",
      projectId: "proj-a",
      purpose: "job-result",
      filename: "lighthouse.png",
      bytes: 6_000_000_000n, // past 2^32
      sha256: "ef".repeat(32),
      path: "files/fi/file-a",
      createdAt: t0,
    },
    minimal: { id: "file-b", purpose: "upload", filename: "x.jsonl", bytes: 0n, sha256: "00".repeat(32), path: "files/fi/file-b" },
    defaults: { projectId: null, createdAt: NOW },
  },
  ComfyWorkflow: {
    parents: [],
    key: "name",
    full: {
      name: "portrait",
      model: "sdxl",
      description: "a portrait from a prompt",
      graph: { "1": { class_type: "CLIPTextEncode", inputs: { text: "{{prompt}}" } } },
      inputs: [{ name: "prompt", kind: "text", max_length: 2000 }],
      output: "mesh",
      createdAt: t0,
      updatedAt: t1,
    },
    minimal: { name: "bare", model: "sdxl", graph: {} },
    defaults: { description: "", inputs: [], output: "image", createdAt: NOW, updatedAt: NOW },
  },
  ModelAdapter: {
    parents: [],
    key: "id",
    full: {
      id: "adp-a",
      modelName: "llama-3-8b",
      name: "support-bot",
      trainingId: "train-a",
      fileId: "file-train-a",
      path: "files/fi/file-train-a",
      sha256: "c".repeat(64),
      bytes: 123_456_789_012n,
      state: "ready",
      loaded: ["llama-3-8b-aaaa1111", "llama-3-8b-bbbb2222"],
      error: "replica llama-3-8b-cccc3333: engine refused",
      createdAt: t0,
      updatedAt: t1,
    },
    minimal: { id: "adp-b", modelName: "llama-3-8b", name: "bare", trainingId: "train-b", fileId: "file-train-b", path: "p", sha256: "d".repeat(64), bytes: 1n },
    defaults: { state: "loading", loaded: [], error: null, createdAt: NOW, updatedAt: NOW },
  },
  Limit: {
    parents: [],
    key: "id",
    full: {
      id: "lim-a",
      scope: "project",
      scopeId: "proj-a",
      rpm: 600,
      tpm: 100_000,
      concurrent: 8,
      monthlyBudgetMicros: 5_000_000_000_000n, // past 2^32
      createdAt: t0,
      updatedAt: t1,
    },
    minimal: { id: "lim-b", scope: "key", scopeId: "key-a" },
    defaults: { rpm: null, tpm: null, concurrent: null, monthlyBudgetMicros: null, createdAt: NOW, updatedAt: NOW },
  },
  AuditEvent: {
    parents: [],
    key: "id",
    full: {
      id: "aud-a",
      at: t1,
      actor: "admin",
      action: "key.revoke",
      target: "key/key-a",
      before: { revokedAt: null },
      after: { revokedAt: "2026-12-01T01:02:03.456Z" },
    },
    minimal: { id: "aud-b", actor: "admin", action: "limit.set", target: "project/chatbot" },
    defaults: { at: NOW, before: null, after: null },
  },
  ClusterCa: {
    parents: [],
    key: "id",
    full: { id: 1, certPem: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", keySealed: "v1.c2VhbGVk", createdAt: t2 },
    minimal: { id: 2, certPem: "pem", keySealed: "v1.eA" },
    defaults: { createdAt: NOW },
  },
};

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
