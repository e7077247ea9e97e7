// The answer cache as the gateway runs it (docs/cache.md): for a project that has one, a request is
// looked up exactly (Redis), then by its last user turn's meaning (pgvector, when the project names
// an embedding model); a miss's answer is kept in both once it has gone out whole. Any part being
// away (Redis, PostgreSQL, pgvector, the embedding model) makes a miss, never a failed request.
import { Counter, type Registry } from "prom-client";
import { log } from "../../common/logging.ts";
import type { EmbedText } from "../router/embed-text.ts";
import type { CachedAnswer } from "./answer.ts";
import type { ExactStore } from "./exact-store.ts";
import { cacheableSampling, requestKeys, type RequestKeys } from "./request-key.ts";
import type { CacheSettings, CacheSettingsBook } from "./settings.ts";
import type { SimilarStore } from "./similar-store.ts";

export type CacheOutcome = "hit" | "similar" | "miss";
/** The routes whose answers are cached. */
export const CACHED_ROUTES: ReadonlySet<string> = new Set(["/v1/chat/completions", "/v1/completions", "/v1/messages", "/v1/embeddings", "/v1/rerank"]);

/** How long an embedding may take before the request goes on as a miss. */
const EMBED_BUDGET_MS = 2_000;
/** After the embedding model failed, it is not asked again for this long (requests go on as misses). */
const EMBED_BACKOFF_MS = 5_000;
const WARN_EVERY_MS = 60_000;

export interface CacheLookup {
  outcome: CacheOutcome;
  answer: CachedAnswer | null;
  settings: CacheSettings;
  keys: RequestKeys;
  embedding: number[] | null;
}

export class AnswerCache {
  private readonly outcomes: Counter<"outcome">;
  /** Per embedding model: when it failed last (asked again after the backoff), and when that was last logged. */
  private embedFailedAt = new Map<string, number>();
  private embedWarnedAt = new Map<string, number>();

  constructor(
    readonly book: CacheSettingsBook,
    private readonly exact: ExactStore,
    private readonly similar: SimilarStore,
    private readonly embed: EmbedText,
    metrics: Registry,
  ) {
    this.outcomes = new Counter({ name: "llmgw_answer_cache_total", help: "Answer cache lookups by outcome (hit, similar, miss)", labelNames: ["outcome"], registers: [metrics] });
  }

  /** The lookup, or null when this request is not cached (its sampling, or a route without a cache). */
  async lookup(s: CacheSettings, route: string, body: Record<string, unknown>): Promise<CacheLookup | null> {
    if (!CACHED_ROUTES.has(route) || !cacheableSampling(route, body, s.allowTemperature)) return null;
    const keys = requestKeys(s.projectId, route, body, s.similar === null ? null : s.embeddingModel);
    const found = (outcome: CacheOutcome, answer: CachedAnswer | null, embedding: number[] | null): CacheLookup => {
      this.outcomes.inc({ outcome });
      return { outcome, answer, settings: s, keys, embedding };
    };
    if (s.exact) {
      const a = await this.exact.get(s.projectId, keys.exact);
      if (a) return found("hit", a, null);
    }
    if (s.similar === null || keys.prefix === null || s.embeddingModel === null || !(await this.similar.ready())) return found("miss", null, null);
    const embedding = await this.embedding(s.embeddingModel, keys.lastUser!);
    if (embedding === null) return found("miss", null, null);
    try {
      const near = await this.similar.nearest(s.projectId, keys.prefix, embedding);
      if (near && near.similarity >= s.similar) return found("similar", near.answer, embedding);
    } catch (err) {
      log.warn("the similar answer cache could not be read", { error: err as Error });
    }
    return found("miss", null, embedding);
  }

  /** Keeps a miss's answer, in the background. */
  keep(l: CacheLookup, a: CachedAnswer): void {
    const { settings: s, keys } = l;
    if (s.exact) this.exact.set(s.projectId, keys.exact, a, s.ttlSeconds);
    if (l.embedding !== null && keys.prefix !== null) {
      this.similar.insert(s.projectId, keys.prefix, l.embedding, a, s.ttlSeconds).catch((err: unknown) => log.warn("the similar answer cache could not be written", { error: err as Error }));
    }
  }

  /** The text's embedding, or null when the model is down (then skipped for a while, and said once a minute). */
  private async embedding(model: string, text: string): Promise<number[] | null> {
    const now = Date.now();
    if (now - (this.embedFailedAt.get(model) ?? 0) < EMBED_BACKOFF_MS) return null;
    try {
      return await this.embed(model, text, AbortSignal.timeout(EMBED_BUDGET_MS));
    } catch (err) {
      this.embedFailedAt.set(model, now);
      if (now - (this.embedWarnedAt.get(model) ?? 0) >= WARN_EVERY_MS) {
        this.embedWarnedAt.set(model, now);
        log.warn("the similar answer cache is off for now: its embedding model does not answer; requests go on without it", { model, error: err as Error });
      }
      return null;
    }
  }
}
