// Writes a batch of usage events to the ledger in one statement: each column as one array
// parameter, unnested into rows, with ON CONFLICT DO NOTHING on the event id (a redelivered batch
// counts nothing twice). Prisma's createMany did the same through its query compiler at ~0.4 CPU-ms
// an event — as much as the gateway spent on the request itself (tests/bench/overhead.ts prints
// the usage worker's share); as a raw statement the compiler is not involved. Times are stored as
// Prisma stores them, UTC wall time in a timestamp(3), whatever the session's time zone.
import type { PrismaClient } from "../common/db.ts";
import type { UsageEvent } from "../common/usage-event.ts";

/** The client or a transaction of it: all the write needs is a raw statement. */
type RawWriter = Pick<PrismaClient, "$executeRaw">;

/** Returns how many events were new. */
export async function writeUsageBatch(db: RawWriter, events: UsageEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const col = <T>(f: (e: UsageEvent) => T): T[] => events.map(f);
  return db.$executeRaw`
    INSERT INTO usage_events (id, at, key_id, project_id, model, version, replica_id, endpoint,
      prompt_tokens, cached_tokens, completion_tokens, cost_micros, latency_ms, ttft_ms, status)
    SELECT id, at AT TIME ZONE 'UTC', key_id, project_id, model, version, replica_id, endpoint,
      prompt_tokens, cached_tokens, completion_tokens, cost_micros, latency_ms, ttft_ms, status
    FROM unnest(
      ${col((e) => e.id)}::text[], ${col((e) => e.at)}::timestamptz[], ${col((e) => e.keyId)}::text[],
      ${col((e) => e.projectId)}::text[], ${col((e) => e.model)}::text[], ${col((e) => e.version)}::text[],
      ${col((e) => e.replicaId)}::text[], ${col((e) => e.endpoint)}::text[], ${col((e) => e.promptTokens)}::int[],
      ${col((e) => e.cachedTokens)}::int[], ${col((e) => e.completionTokens)}::int[], ${col((e) => String(e.costMicros))}::bigint[],
      ${col((e) => e.latencyMs)}::float8[], ${col((e) => e.ttftMs)}::float8[], ${col((e) => e.status)}::int[])
      AS u(id, at, key_id, project_id, model, version, replica_id, endpoint,
        prompt_tokens, cached_tokens, completion_tokens, cost_micros, latency_ms, ttft_ms, status)
    ON CONFLICT (id) DO NOTHING`;
}
