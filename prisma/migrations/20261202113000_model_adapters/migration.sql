-- CreateTable
CREATE TABLE "model_adapters" (
    "id" TEXT NOT NULL,
    "model_name" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "training_id" TEXT NOT NULL,
    "file_id" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "bytes" BIGINT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'loading',
    "loaded" JSONB NOT NULL DEFAULT '[]',
    "error" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "model_adapters_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "model_adapters_model_name_name_key" ON "model_adapters"("model_name", "name");
