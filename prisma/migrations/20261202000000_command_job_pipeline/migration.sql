-- Issue 29: command jobs as a pipeline. A job's workers claim its devices from command_result a few
-- at a time (FOR UPDATE SKIP LOCKED) instead of running fixed batches. A claim leases the row until
-- "claimable_at" (a worker that died leaves it to be claimed again after that); a device to retry
-- waits in "pending" until it. The partial index holds a job's unfinished rows, in order: what the
-- claims scan, however many of the job's devices already finished. A large job keeps its devices'
-- ids in "target_devices" until its first worker writes their rows, so its submission does not.

-- AlterTable
ALTER TABLE "command_job" ADD COLUMN "target_devices" JSONB;

-- AlterTable
ALTER TABLE "command_result" ADD COLUMN "claimable_at" TIMESTAMPTZ(6);

-- CreateIndex
CREATE INDEX "command_result_unfinished_idx" ON "command_result"("command_job", "id") WHERE (finished_at IS NULL);
