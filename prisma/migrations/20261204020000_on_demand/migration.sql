-- On-demand models (min_replicas 0): how long one may sit idle before its replicas are stopped, and
-- how long a request waits for it to wake. Null: the gateway's and worker's settings.
ALTER TABLE "models" ADD COLUMN "idle_after_ms" INTEGER;
ALTER TABLE "models" ADD COLUMN "wake_wait_ms" INTEGER;
