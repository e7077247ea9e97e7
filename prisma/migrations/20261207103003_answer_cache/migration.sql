-- The answer cache (issue 29, docs/cache.md): per-project settings, and the cache's outcome on usage rows.
-- The similar cache's vectors live in a table the gateway makes at run time, only where the
-- pgvector extension can be created (an outside PostgreSQL without it leaves the similar cache off).
CREATE TABLE "answer_cache_settings" (
    "project_id" TEXT NOT NULL,
    "ttl_seconds" INTEGER NOT NULL,
    "exact" BOOLEAN NOT NULL DEFAULT true,
    "similar" DOUBLE PRECISION,
    "embedding_model" TEXT,
    "allow_temperature" BOOLEAN NOT NULL DEFAULT false,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "answer_cache_settings_pkey" PRIMARY KEY ("project_id")
);
ALTER TABLE "answer_cache_settings" ADD CONSTRAINT "answer_cache_settings_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "usage_events" ADD COLUMN "cache" TEXT;
