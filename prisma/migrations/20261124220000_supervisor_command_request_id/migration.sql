-- AlterTable: the x-request-id of the request that sent the command (also on its log line).
ALTER TABLE "supervisor_command" ADD COLUMN "request_id" TEXT;
