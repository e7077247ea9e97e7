// Which projects and keys have an answer cache, and how (docs/cache.md). Every row is held in memory
// and reloaded when the change feed says one changed, so a request of a project without a cache
// costs a map lookup or two and no store read. A key's own settings are used instead of its project's.
import { z } from "zod";
import type { PrismaClient } from "../../common/db.ts";

export interface CacheSettings {
  projectId: string;
  ttlSeconds: number;
  exact: boolean;
  /** Cosine similarity at or above which a similar question's answer is served; null: off. */
  similar: number | null;
  embeddingModel: string | null;
  allowTemperature: boolean;
}

/** The admin API's body: what `ctl cache set` sends. */
export const cacheSettingsBody = z
  .object({
    ttlSeconds: z.number().int().min(1).max(30 * 86_400).describe("how long an answer is kept, in seconds"),
    exact: z.boolean().default(true).describe("serve a repeat of the whole normalized request"),
    similar: z.number().min(0.5).max(1).nullable().default(null).describe("cosine threshold for a similar last user turn; null: off"),
    embeddingModel: z.string().min(1).max(200).nullable().default(null).describe("the catalog's embedding model for the similar cache"),
    allowTemperature: z.boolean().default(false).describe("cache answers sampled at temperature > 0 too"),
  })
  .strict()
  .refine((b) => b.similar === null || b.embeddingModel !== null, { message: "the similar cache needs an embedding model", path: ["embeddingModel"] })
  .refine((b) => b.exact || b.similar !== null, { message: "turn on exact or similar (or DELETE the cache)", path: ["exact"] })
  // The two rules above, in the document's own terms, so a client (or schemathesis) knows them:
  // similar off (null or absent) with exact on (true or absent), or similar on with its embedding model.
  .meta({
    anyOf: [
      { properties: { similar: { type: "null" }, exact: { const: true } } },
      { required: ["similar", "embeddingModel"], properties: { similar: { type: "number" }, embeddingModel: { type: "string" } } },
    ],
  });

/** The settings row's id: one row per project and per key. */
export const cacheSettingsId = (scope: "project" | "key", id: string): string => `${scope}:${id}`;

export class CacheSettingsBook {
  private byProject = new Map<string, CacheSettings>();
  private byKey = new Map<string, CacheSettings>();

  constructor(private readonly db: PrismaClient) {}

  async reload(): Promise<void> {
    const rows = await this.db.answerCacheSetting.findMany();
    const [byProject, byKey] = [new Map<string, CacheSettings>(), new Map<string, CacheSettings>()];
    for (const r of rows) {
      const s = { projectId: r.projectId, ttlSeconds: r.ttlSeconds, exact: r.exact, similar: r.similar, embeddingModel: r.embeddingModel, allowTemperature: r.allowTemperature };
      if (r.keyId === null) byProject.set(r.projectId, s);
      else byKey.set(r.keyId, s);
    }
    [this.byProject, this.byKey] = [byProject, byKey];
  }

  /** The key's own cache, else its project's, else undefined (the usual case: two size checks). */
  for(key: { id: string; projectId: string }): CacheSettings | undefined {
    return (this.byKey.size === 0 ? undefined : this.byKey.get(key.id)) ?? (this.byProject.size === 0 ? undefined : this.byProject.get(key.projectId));
  }
}
