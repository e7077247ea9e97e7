// A batch line reaches an engine once, however often its runner sends it (a worker killed after the
// gateway answered, a gateway killed mid-line): the first try claims the line in Redis (SET NX, one
// round trip, batch lines only) and its answer is kept there with its usage event in one transaction
// (usage/journal.ts), so a later try gets that answer, not a second engine call and usage row.
// A claim whose gateway died before answering (its heartbeat gone) is taken over; one held by a
// live gateway answers 503 and the runner tries again. Claims are per batch, so no batch can read
// another's answers; batch credentials are the cluster's HMAC (common/batch-credential.ts).
import type { Redis } from "ioredis";
import { z } from "zod";
import { log } from "../../common/logging.ts";
import { ApiError } from "../errors.ts";
import { aliveKey, type KeptWith } from "../usage/journal.ts";

/** As long as a batch may run (its 24 h window) and a little: a line is never sent after it. */
const KEEP_MS = 25 * 3600_000;
const RUNNING = "run:";
const DONE = "done:";
const TAKE_OVER = `if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end return 0`;
const keptAnswer = z.object({ status: z.number().int(), body: z.string() });

export type LineClaim = { answer: z.infer<typeof keptAnswer> } | { claimed: BatchLineClaim };

export class BatchLineClaim {
  private done = false;
  constructor(
    private readonly conn: Redis,
    readonly key: string,
  ) {}

  /** What to keep with the usage event: the final answer, replayed to any later try. */
  keep(status: number, body: string): KeptWith {
    this.done = true;
    return { key: this.key, value: DONE + JSON.stringify({ status, body }), ttlMs: KEEP_MS };
  }

  /** Not answered for good (refused before an engine, 429, 5xx, the runner gone): the next try runs it. */
  release(): void {
    if (this.done) return;
    this.done = true;
    void this.conn.del(this.key).catch((err: Error) => log.debug("batch line claim not released", { error: err.message }));
  }
}

export class BatchLines {
  constructor(
    private readonly conn: Redis,
    private readonly gatewayId: string,
  ) {}

  async claim(batchId: string, requestId: string): Promise<LineClaim> {
    const key = `llmgw:batch-line:${batchId}:${requestId}`;
    const mine = RUNNING + this.gatewayId;
    const before = await this.conn.set(key, mine, "PX", KEEP_MS, "NX", "GET");
    if (before === null) return { claimed: new BatchLineClaim(this.conn, key) };
    if (before.startsWith(DONE)) {
      const kept = keptAnswer.safeParse(JSON.parse(before.slice(DONE.length)));
      if (kept.success) return { answer: kept.data };
    } else if (before.startsWith(RUNNING) && !(await this.conn.exists(aliveKey(before.slice(RUNNING.length))))) {
      // Its gateway died before answering (an answer would have been kept with its usage): take over,
      // unless another try just did (compare and set).
      const took = await this.conn.eval(TAKE_OVER, 1, key, before, mine, KEEP_MS);
      if (took === 1) return { claimed: new BatchLineClaim(this.conn, key) };
    }
    throw new ApiError("unavailable", "this batch line is being answered by another try; try again", { code: "batch_line_in_flight", retryAfterS: 1 });
  }
}
