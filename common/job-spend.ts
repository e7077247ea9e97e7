// A job's spend (pictures, ComfyUI workflows) added to its key's monthly budget counters, as a
// request's is at its end (gateway/auth/limit-script.ts): the same Redis keys, so money and GPU-hour
// budgets count jobs too. Called once, when the job's ledger row is first written.
import type { Redis } from "ioredis";
import type { PrismaClient } from "./db.ts";

/** The counters' key prefix of one limit scope; gateway/auth/limiter.ts reads the same. */
export const limitPrefix = (scope: string, scopeId: string) => `llmgw:lim:${scope}:${scopeId}`;
/** The month a spend counts in (UTC), as the limit scripts name it. */
export const spendMonth = (now: number) => new Date(now).toISOString().slice(0, 7);
/** How long a month's counter is kept: past its month, as the settle script keeps it. */
const MONTH_TTL_S = 40 * 86400;

export async function addJobSpend(db: Pick<PrismaClient, "apiKey">, redis: Redis, keyId: string, spend: { costMicros: number; gpuSeconds: number }, now = Date.now()): Promise<void> {
  if (spend.costMicros <= 0 && spend.gpuSeconds <= 0) return;
  const key = await db.apiKey.findUnique({ where: { id: keyId }, select: { id: true, project: { select: { id: true, team: { select: { id: true, orgId: true } } } } } });
  if (!key) return;
  const month = spendMonth(now);
  const scopes = [limitPrefix("org", key.project.team.orgId), limitPrefix("team", key.project.team.id), limitPrefix("project", key.project.id), limitPrefix("key", key.id)];
  const pipe = redis.multi();
  for (const p of scopes) {
    if (spend.costMicros > 0) pipe.incrby(`${p}:spent:${month}`, Math.round(spend.costMicros)).expire(`${p}:spent:${month}`, MONTH_TTL_S);
    if (spend.gpuSeconds > 0) pipe.incrbyfloat(`${p}:gpu:${month}`, spend.gpuSeconds).expire(`${p}:gpu:${month}`, MONTH_TTL_S);
  }
  await pipe.exec();
}
