-- Issue 30, items 9 and 14: the device and release fields of balena's model that balena-sdk 23 (/v7)
-- reads and writes.

-- When the API heartbeat state last changed: stamped by the state reports and the offline sweep
-- (src/devices/state.ts), read by /v7 only, as in balena.
ALTER TABLE "device" ADD COLUMN "changed_api_heartbeat_state_on__date" TIMESTAMPTZ(6),
-- The host OS release a device should run (balena-sdk's device.pinToOsRelease).
ADD COLUMN "should_be_operated_by__release" INTEGER,
-- The update status a v3 state report gives for the device's fleet, and when it was last reported.
ADD COLUMN "update_status" TEXT,
ADD COLUMN "last_update_status_event" TIMESTAMPTZ(6);

-- A fleet's class: fleet, block or app (balena-sdk 23's application.create({applicationClass})).
ALTER TABLE "application" ADD COLUMN "is_of__class" TEXT NOT NULL DEFAULT 'fleet';

-- A host OS release's phase in its line, and why a release was invalidated.
ALTER TABLE "release" ADD COLUMN "phase" TEXT,
ADD COLUMN "invalidation_reason" TEXT;

-- CreateIndex
CREATE INDEX "device_should_be_operated_by__release_id_idx" ON "device"("should_be_operated_by__release", "id");

-- AddForeignKey
ALTER TABLE "device" ADD CONSTRAINT "device_should_be_operated_by__release_fkey" FOREIGN KEY ("should_be_operated_by__release") REFERENCES "release"("id") ON DELETE SET NULL ON UPDATE CASCADE;
