// The exact cache: one Redis value per answer, under the project and the request's hash, with the
// project's TTL. Redis away is a miss (and a warning a minute), never a failed request.
import type { Redis } from "ioredis";
import { log } from "../../common/logging.ts";
import type { CachedAnswer } from "./answer.ts";

const WARN_EVERY_MS = 60_000;

export const exactKey = (projectId: string, hash: string): string => `llmgw:answer:${projectId}:${hash}`;

export class ExactStore {
  private warnedAt = 0;

  constructor(private readonly redis: Redis) {}

  async get(projectId: string, hash: string): Promise<CachedAnswer | null> {
    try {
      const v = await this.redis.get(exactKey(projectId, hash));
      return v === null ? null : (JSON.parse(v) as CachedAnswer);
    } catch (err) {
      this.warn(err);
      return null;
    }
  }

  set(projectId: string, hash: string, a: CachedAnswer, ttlSeconds: number): void {
    this.redis.set(exactKey(projectId, hash), JSON.stringify(a), "EX", ttlSeconds).catch((err: unknown) => this.warn(err));
  }

  private warn(err: unknown): void {
    const now = Date.now();
    if (now - this.warnedAt < WARN_EVERY_MS) return;
    this.warnedAt = now;
    log.warn("the exact answer cache cannot reach Redis: answering without it", { error: err as Error });
  }
}
