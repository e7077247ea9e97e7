// Per server, shared by every gateway through Redis: five failures in a row (an error reaching it,
// a timeout, a protocol error; not a tool's own isError answer) on any gateways take it out for a
// while, its tools off the list; after that one call (on one gateway) is let through as a trial,
// and its success brings the server back, its failure takes it out again. The gateway whose failure
// opened it raises the notification, once. Redis away: every server is let through (the calls'
// own time bounds still hold), as the rate falls back rather than refusing everyone.
import type { Redis } from "ioredis";
import { log } from "../../common/logging.ts";
import { raise } from "../../common/notifier.ts";

export const FAILURES_TO_OPEN = 5;

const keyOf = (server: string) => `llmgw:mcp:breaker:${server}`;

// KEYS[1] the server's hash {failures, openUntil}; ARGV: now, openMs, failures to open, ttl s.
// Returns 1 when this failure opened it.
const FAILED = `
local n = redis.call('HINCRBY', KEYS[1], 'failures', 1)
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
if n < tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], 'openUntil', tonumber(ARGV[1]) + tonumber(ARGV[2]), 'failures', tonumber(ARGV[3]) - 1)
return 1`;

// ARGV: now, openMs. Returns the ms left while out, 0 to go ahead; past the open time, the first
// to ask takes the trial (the others wait out another open time or the trial's success).
const ALLOWS = `
local u = tonumber(redis.call('HGET', KEYS[1], 'openUntil') or '0')
local now = tonumber(ARGV[1])
if u == 0 then return 0 end
if u > now then return u - now end
redis.call('HSET', KEYS[1], 'openUntil', now + tonumber(ARGV[2]))
return 0`;

export class ServerBreakers {
  constructor(
    private readonly redis: Redis,
    private readonly openMs: number,
  ) {}

  private async run(what: string, server: string, fn: () => Promise<unknown>): Promise<unknown> {
    try {
      return await fn();
    } catch (err) {
      log.warn(`MCP breaker not ${what}: Redis unreachable`, { server, error: (err as Error).message });
      return null;
    }
  }

  /** Ms until the server may be called again; 0 when it may be now (a trial after the open time). */
  async outFor(server: string, now = Date.now()): Promise<number> {
    return Number((await this.run("read", server, () => this.redis.eval(ALLOWS, 1, keyOf(server), now, this.openMs))) ?? 0);
  }

  async succeeded(server: string): Promise<void> {
    await this.run("reset", server, () => this.redis.del(keyOf(server)));
  }

  async failed(server: string, why: string, now = Date.now()): Promise<void> {
    const ttlS = Math.ceil(this.openMs / 1000) + 3600;
    const opened = await this.run("counted", server, () => this.redis.eval(FAILED, 1, keyOf(server), now, this.openMs, FAILURES_TO_OPEN, ttlS));
    if (opened !== 1) return;
    raise({ kind: "mcp_server_out", subject: server, summary: `MCP server ${server} failed ${FAILURES_TO_OPEN} times in a row (${why}); its tools are off the list for ${Math.round(this.openMs / 1000)} s`, details: { server } });
  }

  async forget(server: string): Promise<void> {
    await this.succeeded(server);
  }
}
