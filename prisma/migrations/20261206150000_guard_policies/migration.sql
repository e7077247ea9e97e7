-- Guardrail policies (gateway/guard/policy.ts) and the record of their blocks and flags (never the text).
CREATE TABLE "guard_policies" (
    "name" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "scope" TEXT NOT NULL,
    "scope_id" TEXT,
    "document" JSONB NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "guard_policies_pkey" PRIMARY KEY ("name")
);

CREATE TABLE "guard_events" (
    "id" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "key_id" TEXT,
    "project_id" TEXT,
    "model" TEXT NOT NULL,
    "policy" TEXT NOT NULL,
    "rule" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "direction" TEXT NOT NULL,

    CONSTRAINT "guard_events_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "guard_events_at_idx" ON "guard_events"("at");
