-- Supervisor commands as durable jobs (issue 23): the job and one result row per targeted device.
-- The job queue itself (pg-boss) keeps its tables in the schema "pgboss", made by pg-boss at start.

-- CreateTable
CREATE TABLE "command_job" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "is_issued_by__actor" INTEGER NOT NULL,
    "method" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "data" JSONB,
    "target" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "targeted_count" INTEGER NOT NULL DEFAULT 0,
    "done_count" INTEGER NOT NULL DEFAULT 0,
    "ok_count" INTEGER NOT NULL DEFAULT 0,
    "failed_count" INTEGER NOT NULL DEFAULT 0,
    "skipped_count" INTEGER NOT NULL DEFAULT 0,
    "pending_count" INTEGER NOT NULL DEFAULT 0,
    "cancelled_at" TIMESTAMPTZ(6),
    "finished_at" TIMESTAMPTZ(6),
    "idempotency_key" TEXT,
    "app_scoped" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "command_job_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "command_result" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "command_job" INTEGER NOT NULL,
    "device" INTEGER,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "status_code" INTEGER,
    "body" JSONB,
    "error" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "finished_at" TIMESTAMPTZ(6),

    CONSTRAINT "command_result_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "command_job_is_issued_by__actor_id_idx" ON "command_job"("is_issued_by__actor", "id");

-- CreateIndex
CREATE UNIQUE INDEX "command_job_is_issued_by__actor_idempotency_key_key" ON "command_job"("is_issued_by__actor", "idempotency_key");

-- CreateIndex
CREATE INDEX "command_result_command_job_id_idx" ON "command_result"("command_job", "id");

-- CreateIndex
CREATE INDEX "command_result_device_id_idx" ON "command_result"("device", "id");

-- AddForeignKey
ALTER TABLE "command_result" ADD CONSTRAINT "command_result_command_job_fkey" FOREIGN KEY ("command_job") REFERENCES "command_job"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "command_result" ADD CONSTRAINT "command_result_device_fkey" FOREIGN KEY ("device") REFERENCES "device"("id") ON DELETE SET NULL ON UPDATE CASCADE;
