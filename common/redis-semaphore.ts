// A counting semaphore shared by every process on one Redis: at most `cap` holders at once, each
// holding a lease that expires unless renewed. A holder that dies (a worker SIGKILLed mid-job)
// stops renewing, so its slot comes back within one lease; nothing has to clean up after it.
// The holders are a sorted set scored by lease expiry (Redis's own clock, so workers' clocks may
// disagree); every call first drops expired leases. Acquiring is idempotent on the holder.
import type { Redis } from "ioredis";

// KEYS[1] the set; ARGV: holder, cap, ttl ms, force (1: take a slot even past the cap).
// Returns 1 when held (else 0), then the holders.
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZSCORE', KEYS[1], ARGV[1])
local ok = 0
if held or ARGV[4] == '1' or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 2)
  ok = 1
end
local holders = redis.call('ZRANGE', KEYS[1], 0, -1)
table.insert(holders, 1, ok)
return holders
`;

// Renews only a lease still held; 0 when it had expired (the caller decides what that means).
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return 1
`;

const HOLDERS = `
local t = redis.call('TIME')
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
return redis.call('ZRANGE', KEYS[1], 0, -1)
`;

export class RedisSemaphore {
  constructor(
    private readonly redis: Redis,
    readonly key: string,
    readonly cap: number,
    readonly ttlMs: number,
  ) {}

  /** Takes (or keeps) a slot for `holder`; `force` takes one past the cap (work already running). */
  async acquire(holder: string, opts: { force?: boolean } = {}): Promise<{ ok: boolean; holders: string[] }> {
    const [ok, ...holders] = (await this.redis.eval(ACQUIRE, 1, this.key, holder, this.cap, this.ttlMs, opts.force ? 1 : 0)) as [number, ...string[]];
    return { ok: ok === 1, holders };
  }

  /** Extends the lease; false when it had already expired. */
  async renew(holder: string): Promise<boolean> {
    return (await this.redis.eval(RENEW, 1, this.key, holder, this.ttlMs)) === 1;
  }

  async release(holder: string): Promise<void> {
    await this.redis.zrem(this.key, holder);
  }

  /** Holders with a live lease. */
  async holders(): Promise<string[]> {
    return (await this.redis.eval(HOLDERS, 1, this.key)) as string[];
  }
}
