-- Issue 27: an Idempotency-Key stands for one request (draft-ietf-httpapi-idempotency-key-header).
-- The job keeps a fingerprint of the request that made it (src/proxy/jobs/fingerprint.ts), so the
-- same key with another request is refused instead of answered with this job. Jobs made before
-- have none, and a retry of theirs is answered as before.

-- AlterTable
ALTER TABLE "command_job" ADD COLUMN "request_fingerprint" TEXT;
