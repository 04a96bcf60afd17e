-- The model pieces balena-sdk reads (issue 19).

-- balena's organization roles become rows that a membership links to: balena-sdk looks a role up
-- by name (organization_membership_role(name='administrator')) and writes the link. Fixed ids: the
-- membership's default (member) names one. fleetgate's "owner" is balena's "administrator"; the old
-- text field `role` is read (and written) as a computed field.
-- CreateTable
CREATE TABLE "organization_membership_role" (
    "id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    CONSTRAINT "organization_membership_role_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "organization_membership_role_name_key" ON "organization_membership_role"("name");

INSERT INTO "organization_membership_role" ("id", "name") VALUES (1, 'administrator'), (2, 'member');

ALTER TABLE "organization_membership" ADD COLUMN "organization_membership_role" INTEGER NOT NULL DEFAULT 2;
UPDATE "organization_membership" SET "organization_membership_role" = 1 WHERE "role" = 'owner';
ALTER TABLE "organization_membership" DROP COLUMN "role";

-- CreateIndex
CREATE INDEX "organization_membership_organization_membership_role_id_idx" ON "organization_membership"("organization_membership_role", "id");

-- AddForeignKey
ALTER TABLE "organization_membership" ADD CONSTRAINT "organization_membership_organization_membership_role_fkey" FOREIGN KEY ("organization_membership_role") REFERENCES "organization_membership_role"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Host OS fleets and archived fleets (balena-sdk's deviceType.getAllSupported filters on both).
ALTER TABLE "application" ADD COLUMN "is_host" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN "is_archived" BOOLEAN NOT NULL DEFAULT false;

-- balena's release versioning: a variant, a revision per final release, a known-issue list. The
-- semver parts and raw_version are computed from these and `semver`.
ALTER TABLE "release" ADD COLUMN "variant" TEXT NOT NULL DEFAULT '',
ADD COLUMN "revision" INTEGER,
ADD COLUMN "known_issue_list" TEXT;

-- Existing final releases are numbered per fleet, version (semver without build metadata; an
-- unparsable semver counts as 0.0.0) and variant, oldest first, as src/core/sql/release-version.ts
-- parses it.
UPDATE "release" r SET "revision" = n."revision"
FROM (
    SELECT v."id", row_number() OVER (
            PARTITION BY v."belongs_to__application", coalesce(v.m[1]::int, 0), coalesce(v.m[2]::int, 0),
                coalesce(v.m[3]::int, 0), coalesce(v.m[4], ''), v."variant"
            ORDER BY v."created_at", v."id") - 1 AS "revision"
    FROM (
        SELECT "id", "belongs_to__application", "variant", "created_at",
            regexp_match("semver", '^[v=]?(\d{1,9})\.(\d{1,9})\.(\d{1,9})(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?$') AS m
        FROM "release"
        WHERE "is_final"
    ) v
) n
WHERE r."id" = n."id";
