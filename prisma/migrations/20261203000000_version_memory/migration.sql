-- A version's size and shape, for the GPU memory a replica needs (weights plus KV cache).
ALTER TABLE "model_versions" ADD COLUMN "memory" JSONB;
