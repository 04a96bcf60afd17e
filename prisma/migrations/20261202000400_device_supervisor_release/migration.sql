-- Issue 30: the supervisor release a device should run, as balena's v7 model links it: a release (of a
-- public balena_os/<arch>-supervisor fleet), written by balena-sdk 23's device.pinToSupervisorRelease.
-- v6's should_be_managed_by__supervisor_release (a supervisor_release row) stays as it was.
ALTER TABLE "device" ADD COLUMN "should_be_managed_by__release" INTEGER;

-- CreateIndex
CREATE INDEX "device_should_be_managed_by__release_id_idx" ON "device"("should_be_managed_by__release", "id");

-- AddForeignKey
ALTER TABLE "device" ADD CONSTRAINT "device_should_be_managed_by__release_fkey" FOREIGN KEY ("should_be_managed_by__release") REFERENCES "release"("id") ON DELETE SET NULL ON UPDATE CASCADE;
