import { defineConfig } from "prisma/config";

// The schema engine cannot be downloaded here, so migrations are plain SQL files applied by
// common/migrate.ts; `prisma migrate deploy` reads the same folder where the engine exists.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://llmgw@127.0.0.1:5433/llmgw" },
});
