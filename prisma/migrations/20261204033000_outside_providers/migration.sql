-- Outside OpenAI-compatible providers of a model and the models its requests fall back to.
ALTER TABLE "models" ADD COLUMN "providers" JSONB NOT NULL DEFAULT '[]';
ALTER TABLE "models" ADD COLUMN "fallbacks" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[];
