-- The answer cache (issue 29, docs/cache.md): a project's or a key's settings, and the cache's
-- outcome on usage rows. The similar cache's vectors live in a table the gateway makes at run time,
-- only where the pgvector extension can be created (an outside PostgreSQL without it leaves the
-- similar cache off; this migration never needs it).
CREATE TABLE "answer_cache_settings" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "key_id" TEXT,
    "ttl_seconds" INTEGER NOT NULL,
    "exact" BOOLEAN NOT NULL DEFAULT true,
    "similar" DOUBLE PRECISION,
    "embedding_model" TEXT,
    "allow_temperature" BOOLEAN NOT NULL DEFAULT false,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "answer_cache_settings_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "answer_cache_settings_project_id_idx" ON "answer_cache_settings"("project_id");
ALTER TABLE "answer_cache_settings" ADD CONSTRAINT "answer_cache_settings_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "answer_cache_settings" ADD CONSTRAINT "answer_cache_settings_key_id_fkey" FOREIGN KEY ("key_id") REFERENCES "api_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "usage_events" ADD COLUMN "cache" TEXT;
