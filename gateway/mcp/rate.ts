// A rate per caller (key) per server: calls counted in Redis in one-minute windows, so every
// gateway counts together. Redis away: the call goes through (the server's own limits still hold),
// as the inference limiter falls back rather than refusing everyone.
import type { Redis } from "ioredis";
import { log } from "../../common/logging.ts";

export interface RateVerdict {
  allowed: boolean;
  /** Seconds until the window ends, when refused. */
  retryAfterS: number;
}

export async function takeCall(redis: Redis, server: string, keyId: string, perMin: number | null, now = Date.now()): Promise<RateVerdict> {
  if (perMin === null) return { allowed: true, retryAfterS: 0 };
  const window = Math.floor(now / 60_000);
  const k = `llmgw:mcp:rate:${server}:${keyId}:${window}`;
  try {
    const [[, n]] = (await redis.multi().incr(k).expire(k, 120).exec()) as [[Error | null, number]];
    return { allowed: n <= perMin, retryAfterS: Math.ceil(((window + 1) * 60_000 - now) / 1000) };
  } catch (err) {
    log.warn("MCP rate not counted: Redis unreachable", { server, error: (err as Error).message });
    return { allowed: true, retryAfterS: 0 };
  }
}
