-- CreateTable
CREATE TABLE "comfy_workflows" (
    "name" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "graph" JSONB NOT NULL,
    "inputs" JSONB NOT NULL DEFAULT '[]',
    "output" TEXT NOT NULL DEFAULT 'image',
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "comfy_workflows_pkey" PRIMARY KEY ("name")
);
