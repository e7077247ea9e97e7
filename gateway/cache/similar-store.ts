// The similar cache's store: each answer with the embedding of its last user turn, in PostgreSQL
// with pgvector, found by cosine distance among the answers of the same project and prefix key.
// The extension and table are made at run time, not by a migration: a PostgreSQL without pgvector
// (an outside one) leaves the similar cache off, says why, and tries again a minute later.
import type { PrismaClient } from "../../common/db.ts";
import { log } from "../../common/logging.ts";
import type { CachedAnswer } from "./answer.ts";

const RETRY_MS = 60_000;
const PURGE_EVERY_MS = 60_000;

const SETUP = [
  "CREATE EXTENSION IF NOT EXISTS vector",
  `CREATE TABLE IF NOT EXISTS answer_cache_vectors (
     id BIGSERIAL PRIMARY KEY,
     project_id TEXT NOT NULL,
     prefix_key TEXT NOT NULL,
     embedding vector NOT NULL,
     answer TEXT NOT NULL,
     expires_at TIMESTAMPTZ NOT NULL)`,
  "CREATE INDEX IF NOT EXISTS answer_cache_vectors_prefix ON answer_cache_vectors (project_id, prefix_key, expires_at)",
];

const literal = (v: readonly number[]): string => `[${v.join(",")}]`;

export class SimilarStore {
  private state: "unknown" | "ready" | "off" = "unknown";
  private retryAt = 0;
  private setup: Promise<boolean> | null = null;
  private purgedAt = 0;

  constructor(private readonly db: PrismaClient) {}

  /** Whether pgvector can be used: set up once; after a failure, tried again a minute later. */
  async ready(): Promise<boolean> {
    if (this.state === "ready") return true;
    if (this.state === "off" && Date.now() < this.retryAt) return false;
    this.setup ??= this.prepare().finally(() => (this.setup = null));
    return this.setup;
  }

  private async prepare(): Promise<boolean> {
    let last: unknown;
    // Twice: another gateway making the extension at the same moment fails one of them once.
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        for (const sql of SETUP) await this.db.$executeRawUnsafe(sql);
        if (this.state !== "ready") log.info("the similar answer cache is on (pgvector)");
        this.state = "ready";
        return true;
      } catch (err) {
        last = err;
      }
    }
    this.state = "off";
    this.retryAt = Date.now() + RETRY_MS;
    log.warn("the similar answer cache is off: this PostgreSQL has no usable pgvector extension (scripts/pgvector.sh install, or an image with it); exact answers are still cached", { error: last as Error });
    return false;
  }

  /** The nearest live answer of this project and prefix, and its cosine similarity. */
  async nearest(projectId: string, prefixKey: string, embedding: readonly number[]): Promise<{ answer: CachedAnswer; similarity: number } | null> {
    const rows = await this.db.$queryRawUnsafe<{ answer: string; similarity: number }[]>(
      `SELECT answer, 1 - (embedding <=> $1::vector) AS similarity FROM answer_cache_vectors
        WHERE project_id = $2 AND prefix_key = $3 AND expires_at > now() AND vector_dims(embedding) = $4
        ORDER BY embedding <=> $1::vector LIMIT 1`,
      literal(embedding),
      projectId,
      prefixKey,
      embedding.length,
    );
    const row = rows[0];
    return row ? { answer: JSON.parse(row.answer) as CachedAnswer, similarity: Number(row.similarity) } : null;
  }

  async insert(projectId: string, prefixKey: string, embedding: readonly number[], answer: CachedAnswer, ttlSeconds: number): Promise<void> {
    await this.db.$executeRawUnsafe(
      `INSERT INTO answer_cache_vectors (project_id, prefix_key, embedding, answer, expires_at) VALUES ($1, $2, $3::vector, $4, now() + make_interval(secs => $5))`,
      projectId,
      prefixKey,
      literal(embedding),
      JSON.stringify(answer),
      ttlSeconds,
    );
    const now = Date.now();
    if (now - this.purgedAt > PURGE_EVERY_MS) {
      this.purgedAt = now;
      await this.db.$executeRawUnsafe("DELETE FROM answer_cache_vectors WHERE expires_at < now()");
    }
  }
}
