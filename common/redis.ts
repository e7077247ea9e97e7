// Redis connections. Gateways share rate windows and budgets through it, hear the change feed on
// it, and BullMQ queues live in it.
import { Redis, type RedisOptions } from "ioredis";
import { config } from "./config.ts";

export function redis(url: string = config().redisUrl, opts: RedisOptions = {}): Redis {
  return new Redis(url, { lazyConnect: false, maxRetriesPerRequest: null, ...opts });
}
