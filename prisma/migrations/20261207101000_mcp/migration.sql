-- The MCP gateway (gateway/mcp/): registered tool servers, and tool grants on limits' scopes.
ALTER TABLE "limits" ADD COLUMN "tools" TEXT[] DEFAULT ARRAY[]::TEXT[];

CREATE TABLE "mcp_servers" (
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "url" TEXT,
    "command" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "env" JSONB NOT NULL DEFAULT '{}',
    "openapi" JSONB,
    "header_files" JSONB NOT NULL DEFAULT '{}',
    "timeout_ms" INTEGER NOT NULL DEFAULT 30000,
    "rate_per_min" INTEGER,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "mcp_servers_pkey" PRIMARY KEY ("name")
);
