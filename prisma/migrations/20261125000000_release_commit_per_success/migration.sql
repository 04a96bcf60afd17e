-- balena's rule: a fleet has at most one *successful* release per commit, so a failed build and its
-- rebuild of the same commit can coexist.
DROP INDEX "release_belongs_to__application_commit_key";

-- CreateIndex
CREATE UNIQUE INDEX "release_belongs_to__application_commit_key" ON "release"("belongs_to__application", "commit") WHERE ("status" = 'success');

-- CreateIndex
CREATE INDEX "release_belongs_to__application_commit_idx" ON "release"("belongs_to__application", "commit");

-- AlterTable: the composition the balena CLI sends when it creates a release.
ALTER TABLE "release" ADD COLUMN "composition" JSONB;
