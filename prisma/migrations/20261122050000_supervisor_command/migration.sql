-- CreateTable
CREATE TABLE "supervisor_command" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "is_issued_by__actor" INTEGER NOT NULL,
    "method" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "data" JSONB,
    "results" JSONB NOT NULL,
    CONSTRAINT "supervisor_command_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "supervisor_command_is_issued_by__actor_id_idx" ON "supervisor_command"("is_issued_by__actor", "id");
