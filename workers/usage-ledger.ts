// Writes a batch of usage events to the ledger in one prepared statement: each column as one array
// parameter, unnested into rows, with ON CONFLICT DO NOTHING on the event id (a redelivered batch
// counts nothing twice). It goes over node-postgres, not Prisma: Prisma's createMany cost ~0.4
// CPU-ms an event and even its $executeRaw about twice what node-postgres does for the same
// statement (docs/benchmarks.md), and this worker shares its machine with the gateway's hot path
// wherever the platform runs on one. Times are stored as Prisma stores them, UTC wall time in a
// timestamp(3), whatever the session's time zone.
import type pg from "pg";
import type { UsageEvent } from "../common/usage-event.ts";

/** A pool or one connection of it: all the write needs is a query. */
export type LedgerWriter = Pick<pg.Pool | pg.PoolClient, "query">;

const INSERT = `
  INSERT INTO usage_events (id, at, key_id, project_id, model, version, replica_id, endpoint,
    prompt_tokens, cached_tokens, completion_tokens, cost_micros, latency_ms, ttft_ms, status, person_id, gpu_seconds, cache, batch_id)
  SELECT id, at AT TIME ZONE 'UTC', key_id, project_id, model, version, replica_id, endpoint,
    prompt_tokens, cached_tokens, completion_tokens, cost_micros, latency_ms, ttft_ms, status, person_id, gpu_seconds, cache, batch_id
  FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
    $8::text[], $9::int[], $10::int[], $11::int[], $12::bigint[], $13::float8[], $14::float8[], $15::int[],
    $16::text[], $17::float8[], $18::text[], $19::text[])
    AS u(id, at, key_id, project_id, model, version, replica_id, endpoint,
      prompt_tokens, cached_tokens, completion_tokens, cost_micros, latency_ms, ttft_ms, status, person_id, gpu_seconds, cache, batch_id)
  ON CONFLICT (id) DO NOTHING`;

/** Returns how many events were new. */
export async function writeUsageBatch(db: LedgerWriter, events: UsageEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const col = <T>(f: (e: UsageEvent) => T): T[] => events.map(f);
  // Named: each connection parses and plans it once.
  const result = await db.query({
    name: "llmgw-usage-insert",
    text: INSERT,
    values: [
      col((e) => e.id), col((e) => e.at), col((e) => e.keyId), col((e) => e.projectId), col((e) => e.model),
      col((e) => e.version), col((e) => e.replicaId), col((e) => e.endpoint), col((e) => e.promptTokens),
      col((e) => e.cachedTokens), col((e) => e.completionTokens), col((e) => String(e.costMicros)),
      col((e) => e.latencyMs), col((e) => e.ttftMs), col((e) => e.status), col((e) => e.personId ?? null),
      col((e) => e.gpuSeconds ?? 0), col((e) => e.cache ?? null), col((e) => e.batchId ?? null),
    ],
  });
  return result.rowCount ?? 0;
}
