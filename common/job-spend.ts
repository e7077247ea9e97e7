// A job's spend (pictures, ComfyUI workflows) added to its key's monthly budget counters, as a
// request's is at its end (gateway/auth/limit-script.ts): the same Redis keys, so money and GPU-hour
// budgets count jobs too. Exactly once per job, however often it is called: a marker set in the same
// script as the counters, so a crash between the ledger row and the counters is made good by the
// activity's retry, and a retry after both adds nothing.
import type { Redis } from "ioredis";
import type { PrismaClient } from "./db.ts";

/** The counters' key prefix of one limit scope; gateway/auth/limiter.ts reads the same. */
export const limitPrefix = (scope: string, scopeId: string) => `llmgw:lim:${scope}:${scopeId}`;
/** The month a spend counts in (UTC), as the limit scripts name it. */
export const spendMonth = (now: number) => new Date(now).toISOString().slice(0, 7);
/** How long a month's counter is kept: past its month, as the settle script keeps it. */
const MONTH_TTL_S = 40 * 86400;

/** How long a job's added-once marker is kept: as long as the month's counter it guards. */
const MARKER_TTL_S = MONTH_TTL_S;

// KEYS[1]: the job's marker; KEYS[2..]: each scope's money counter then its GPU counter.
// ARGV: micro-units, GPU-seconds, the counters' TTL. Nothing is added when the marker exists.
const ADD_ONCE = `
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[3]) then return 0 end
for i = 2, #KEYS, 2 do
  if tonumber(ARGV[1]) > 0 then redis.call('INCRBY', KEYS[i], ARGV[1]); redis.call('EXPIRE', KEYS[i], ARGV[3]) end
  if tonumber(ARGV[2]) > 0 then redis.call('INCRBYFLOAT', KEYS[i + 1], ARGV[2]); redis.call('EXPIRE', KEYS[i + 1], ARGV[3]) end
end
return 1`;

/** Adds job `jobId`'s spend to its key's counters, in the month of `at` (its ledger row's time); true when this call added it. */
export async function addJobSpend(db: Pick<PrismaClient, "apiKey">, redis: Redis, jobId: string, keyId: string, spend: { costMicros: number; gpuSeconds: number }, at: number): Promise<boolean> {
  if (spend.costMicros <= 0 && spend.gpuSeconds <= 0) return false;
  const key = await db.apiKey.findUnique({ where: { id: keyId }, select: { id: true, project: { select: { id: true, team: { select: { id: true, orgId: true } } } } } });
  if (!key) return false;
  const month = spendMonth(at);
  const scopes = [limitPrefix("org", key.project.team.orgId), limitPrefix("team", key.project.team.id), limitPrefix("project", key.project.id), limitPrefix("key", key.id)];
  const keys = [`llmgw:job-spend-added:${jobId}`, ...scopes.flatMap((p) => [`${p}:spent:${month}`, `${p}:gpu:${month}`])];
  const added = await redis.eval(ADD_ONCE, keys.length, ...keys, String(Math.round(spend.costMicros)), String(spend.gpuSeconds), String(MARKER_TTL_S));
  return added === 1;
}
