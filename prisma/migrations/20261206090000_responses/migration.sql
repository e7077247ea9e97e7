-- /v1/responses: answers kept for retrieval and previous_response_id, and a project's opt-out.
ALTER TABLE "projects" ADD COLUMN "no_store" BOOLEAN NOT NULL DEFAULT false;

CREATE TABLE "stored_responses" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "response" JSONB NOT NULL,
    "input_items" JSONB NOT NULL,
    "conversation" JSONB NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "stored_responses_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "stored_responses_created_at_idx" ON "stored_responses"("created_at");

ALTER TABLE "stored_responses" ADD CONSTRAINT "stored_responses_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;
