-- A usage row made by a /v1/batches batch line names its batch (priced at the model's batch discount).
ALTER TABLE "usage_events" ADD COLUMN "batch_id" TEXT;
