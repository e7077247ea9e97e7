-- People (issue 31): people and their ids at identity providers, memberships with roles, the
-- directory's groups and the rules mapping them to memberships; keys and usage that carry a person;
-- usage's GPU-seconds and budgets in GPU time; audit rows naming the person.
CREATE TABLE "people" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "email" TEXT,
    "disabled" BOOLEAN NOT NULL DEFAULT false,
    "version" INTEGER NOT NULL DEFAULT 1,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "people_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "people_email_key" ON "people"("email");

CREATE TABLE "person_identities" (
    "id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "person_id" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "person_identities_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "person_identities_person_id_fkey" FOREIGN KEY ("person_id") REFERENCES "people"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "person_identities_provider_subject_key" ON "person_identities"("provider","subject");
CREATE INDEX "person_identities_person_id_idx" ON "person_identities"("person_id");

CREATE TABLE "memberships" (
    "id" TEXT NOT NULL,
    "person_id" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "scope_id" TEXT,
    "role" TEXT NOT NULL,
    "source" TEXT NOT NULL DEFAULT 'manual',
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "memberships_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "memberships_person_id_fkey" FOREIGN KEY ("person_id") REFERENCES "people"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
-- NULLS NOT DISTINCT: a platform membership (scope_id null) is unique too.
CREATE UNIQUE INDEX "memberships_person_id_scope_scope_id_role_source_key" ON "memberships"("person_id","scope","scope_id","role","source") NULLS NOT DISTINCT;
CREATE INDEX "memberships_scope_scope_id_idx" ON "memberships"("scope","scope_id");

CREATE TABLE "directory_groups" (
    "id" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "external_id" TEXT,
    "version" INTEGER NOT NULL DEFAULT 1,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "directory_groups_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "directory_groups_display_name_key" ON "directory_groups"("display_name");

CREATE TABLE "directory_group_members" (
    "id" TEXT NOT NULL,
    "group_id" TEXT NOT NULL,
    "person_id" TEXT NOT NULL,
    CONSTRAINT "directory_group_members_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "directory_group_members_group_id_fkey" FOREIGN KEY ("group_id") REFERENCES "directory_groups"("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "directory_group_members_person_id_fkey" FOREIGN KEY ("person_id") REFERENCES "people"("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "directory_group_members_group_id_person_id_key" ON "directory_group_members"("group_id","person_id");
CREATE INDEX "directory_group_members_person_id_idx" ON "directory_group_members"("person_id");

CREATE TABLE "group_mappings" (
    "id" TEXT NOT NULL,
    "provider" TEXT,
    "group" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "scope_id" TEXT,
    "role" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "group_mappings_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "group_mappings_provider_group_scope_scope_id_role_key" ON "group_mappings"("provider","group","scope","scope_id","role") NULLS NOT DISTINCT;

ALTER TABLE "api_keys" ADD COLUMN "person_id" TEXT;
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_person_id_fkey" FOREIGN KEY ("person_id") REFERENCES "people"("id") ON DELETE CASCADE ON UPDATE CASCADE;
CREATE INDEX "api_keys_person_id_idx" ON "api_keys"("person_id");

ALTER TABLE "usage_events" ADD COLUMN "person_id" TEXT;
ALTER TABLE "usage_events" ADD COLUMN "gpu_seconds" DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE "limits" ADD COLUMN "monthly_budget_gpu_seconds" DOUBLE PRECISION;
ALTER TABLE "audit_events" ADD COLUMN "person_id" TEXT;
