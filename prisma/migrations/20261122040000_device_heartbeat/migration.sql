-- When a device last reported, for the sweeper that marks silent devices offline.
ALTER TABLE "device" ADD COLUMN "last_heartbeat_at" TIMESTAMPTZ(6);
