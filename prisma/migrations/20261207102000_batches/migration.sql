-- /v1/batches (issue 29): batches and their lines' answers, kept as each line finishes.
CREATE TABLE "batches" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "key_id" TEXT NOT NULL,
    "endpoint" TEXT NOT NULL,
    "input_file_id" TEXT NOT NULL,
    "completion_window" TEXT NOT NULL DEFAULT '24h',
    "status" TEXT NOT NULL DEFAULT 'validating',
    "output_file_id" TEXT,
    "error_file_id" TEXT,
    "total" INTEGER NOT NULL DEFAULT 0,
    "completed" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "metadata" JSONB,
    "errors" JSONB,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "in_progress_at" TIMESTAMP(3),
    "finalizing_at" TIMESTAMP(3),
    "completed_at" TIMESTAMP(3),
    "failed_at" TIMESTAMP(3),
    "expired_at" TIMESTAMP(3),
    "cancelling_at" TIMESTAMP(3),
    "cancelled_at" TIMESTAMP(3),
    "expires_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "batches_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "batches_project_id_created_at_idx" ON "batches"("project_id", "created_at");

ALTER TABLE "batches" ADD CONSTRAINT "batches_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

CREATE TABLE "batch_results" (
    "id" TEXT NOT NULL,
    "batch_id" TEXT NOT NULL,
    "custom_id" TEXT NOT NULL,
    "line" INTEGER NOT NULL,
    "status_code" INTEGER NOT NULL,
    "body" TEXT NOT NULL,
    "request_id" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "batch_results_pkey" PRIMARY KEY ("id")
);

CREATE UNIQUE INDEX "batch_results_batch_id_custom_id_key" ON "batch_results"("batch_id", "custom_id");

ALTER TABLE "batch_results" ADD CONSTRAINT "batch_results_batch_id_fkey" FOREIGN KEY ("batch_id") REFERENCES "batches"("id") ON DELETE CASCADE ON UPDATE CASCADE;
