// Redis: rate limits, the change feed and the usage queue live there.
import { Redis } from "ioredis";
import { loadConfig } from "../common/config.ts";
import { fail, ok, redact, warn, within, type Check } from "./finding.ts";

export const redis: Check = {
  name: "redis",
  roles: ["control"],
  async run(ctx) {
    const url = loadConfig(ctx.env).redisUrl;
    const r = new Redis(url, { lazyConnect: true, connectTimeout: ctx.timeoutMs, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    r.on("error", () => undefined);
    try {
      await within(ctx.timeoutMs, "Redis", r.connect());
      const info = await within(ctx.timeoutMs, "Redis", r.info("server"));
      const version = /redis_version:(\S+)/.exec(info)?.[1] ?? "?";
      const policy = await within(ctx.timeoutMs, "Redis", r.config("GET", "maxmemory-policy")).catch(() => null);
      const evicts = Array.isArray(policy) && policy[1] && policy[1] !== "noeviction";
      // BullMQ loses jobs (usage batches) when Redis evicts keys.
      if (evicts) return warn(`Redis ${version} at ${redact(url)} evicts keys (maxmemory-policy ${policy[1]})`, "set maxmemory-policy noeviction: BullMQ's usage queue must not lose jobs");
      return ok(`Redis ${version} at ${redact(url)}`);
    } catch (err) {
      return fail(`Redis at ${redact(url)} is not reachable: ${(err as Error).message}`, "start it (bash scripts/services.sh start, or the redis service) or set REDIS_URL");
    } finally {
      r.disconnect();
    }
  },
};
