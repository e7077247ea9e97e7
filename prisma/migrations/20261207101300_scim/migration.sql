-- SCIM 2.0 (issue 31): what an identity provider's provisioning needs beside the people's store.
-- people.scim_user_name: SCIM's userName, lower-cased (SCIM compares it case-insensitively),
-- unique; null for people SCIM never made. people.scim / directory_groups.scim: the rest of the
-- resource as the provider sent it (name parts, phone numbers, the enterprise extension...), so
-- what it writes it reads back. scim_tokens: the bearer tokens providers use, only their sha256.
ALTER TABLE "people" ADD COLUMN "scim_user_name" TEXT, ADD COLUMN "scim" JSONB;
CREATE UNIQUE INDEX "people_scim_user_name_key" ON "people"("scim_user_name");
ALTER TABLE "directory_groups" ADD COLUMN "scim" JSONB;

CREATE TABLE "scim_tokens" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMP(3),
    CONSTRAINT "scim_tokens_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "scim_tokens_name_key" ON "scim_tokens"("name");
CREATE UNIQUE INDEX "scim_tokens_hash_key" ON "scim_tokens"("hash");
