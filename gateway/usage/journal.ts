// The usage journal: every accepted request's usage event is appended to a Redis stream of this
// gateway's own (one XADD, awaited before the answer's last byte) and deleted once BullMQ holds it.
// A gateway killed before its recorder flushed leaves its stream behind; any live gateway finds it
// (its heartbeat key expired) and queues what it holds. The usage worker writes each event once by
// its id, so an entry queued twice (a drain cut short, a flush that died before its XDEL) counts once.
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { log } from "../../common/logging.ts";
import { usageEvent, type UsageEvent } from "../../common/usage-event.ts";

const PREFIX = "llmgw:usage:journal:";
/** Every journal that may hold entries, by gateway id. */
const REGISTRY = "llmgw:usage:journals";
/** A gateway not heard from for this long is dead: its journal is someone else's to drain. */
export const JOURNAL_ALIVE_MS = 10_000;
/** How long a drain may hold a dead gateway's journal before another may take it over. */
const CLAIM_MS = 60_000;
const DRAIN_PAGE = 500;

/** The key whose presence says gateway `id` is alive (its journal and its batch-line claims are its own). */
export const aliveKey = (id: string) => `${PREFIX}${id}:alive`;

/** Kept with an event in the same transaction (a batch line's answer: client-api/batch-line-once.ts). */
export interface KeptWith {
  key: string;
  value: string;
  ttlMs: number;
}

export class UsageJournal {
  readonly id = randomUUID();
  private readonly key = `${PREFIX}${this.id}`;
  private readonly alive = aliveKey(this.id);

  constructor(private readonly conn: Redis) {}

  /** Appends one event (and `also`, atomically); resolves with its entry id once Redis holds it. */
  async append(json: string, also?: KeptWith): Promise<string | null> {
    if (!also) return this.conn.xadd(this.key, "*", "e", json);
    const out = await this.conn.multi().xadd(this.key, "*", "e", json).set(also.key, also.value, "PX", also.ttlMs).exec();
    const [err, id] = out?.[0] ?? [new Error("the usage journal transaction was discarded"), null];
    if (err) throw err;
    return id as string | null;
  }

  /** Deletes entries BullMQ now holds. */
  async remove(ids: string[]): Promise<void> {
    if (ids.length) await this.conn.xdel(this.key, ...ids);
  }

  /** Says this gateway is alive (its journal is its own) and registers the journal. */
  async beat(): Promise<void> {
    await this.conn.multi().set(this.alive, "1", "PX", JOURNAL_ALIVE_MS).zadd(REGISTRY, Date.now(), this.id).exec();
  }

  /** Queues what dead gateways' journals hold, through `send`, then drops those journals. */
  async drainDead(send: (events: UsageEvent[]) => Promise<void>): Promise<number> {
    let all = 0;
    for (const other of await this.conn.zrange(REGISTRY, 0, -1)) {
      if (other === this.id || (await this.conn.exists(aliveKey(other)))) continue;
      const claim = `${PREFIX}${other}:claim`;
      if ((await this.conn.set(claim, this.id, "PX", CLAIM_MS, "NX")) === null) continue;
      const key = `${PREFIX}${other}`;
      let moved = 0;
      for (;;) {
        const page = await this.conn.xrange(key, "-", "+", "COUNT", DRAIN_PAGE);
        if (page.length === 0) break;
        const events = page.flatMap(([, fields]) => parseEntry(fields));
        if (events.length) await send(events);
        await this.conn.xdel(key, ...page.map(([id]) => id));
        moved += events.length;
      }
      await this.conn.multi().del(key).zrem(REGISTRY, other).del(claim).exec();
      log.info("usage journal of a dead gateway queued", { gateway: other, events: moved });
      all += moved;
    }
    return all;
  }

  /** At a clean stop: an empty journal is dropped; one still holding entries is left for another gateway. */
  async close(): Promise<void> {
    const left = await this.conn.xlen(this.key);
    if (left === 0) await this.conn.multi().del(this.key).zrem(REGISTRY, this.id).del(this.alive).exec();
    else await this.conn.del(this.alive);
  }
}

function parseEntry(fields: string[]): UsageEvent[] {
  const json = fields[1];
  if (fields[0] !== "e" || json === undefined) return [];
  try {
    const e = usageEvent.safeParse(JSON.parse(json));
    if (e.success) return [e.data];
  } catch {
    // not JSON: said below
  }
  log.warn("unreadable usage journal entry skipped");
  return [];
}
