-- Release tags and fleet and device configuration variables, as balena-sdk writes them (issue 19).

-- CreateTable
CREATE TABLE "release_tag" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "release" INTEGER NOT NULL,
    "tag_key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    CONSTRAINT "release_tag_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "device_config_variable" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "device" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    CONSTRAINT "device_config_variable_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "application_config_variable" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "application" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    CONSTRAINT "application_config_variable_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "release_tag_release_id_idx" ON "release_tag"("release", "id");

-- CreateIndex
CREATE UNIQUE INDEX "release_tag_release_tag_key_key" ON "release_tag"("release", "tag_key");

-- CreateIndex
CREATE INDEX "device_config_variable_device_id_idx" ON "device_config_variable"("device", "id");

-- CreateIndex
CREATE UNIQUE INDEX "device_config_variable_device_name_key" ON "device_config_variable"("device", "name");

-- CreateIndex
CREATE INDEX "application_config_variable_application_id_idx" ON "application_config_variable"("application", "id");

-- CreateIndex
CREATE UNIQUE INDEX "application_config_variable_application_name_key" ON "application_config_variable"("application", "name");

-- AddForeignKey
ALTER TABLE "release_tag" ADD CONSTRAINT "release_tag_release_fkey" FOREIGN KEY ("release") REFERENCES "release"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "device_config_variable" ADD CONSTRAINT "device_config_variable_device_fkey" FOREIGN KEY ("device") REFERENCES "device"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "application_config_variable" ADD CONSTRAINT "application_config_variable_application_fkey" FOREIGN KEY ("application") REFERENCES "application"("id") ON DELETE CASCADE ON UPDATE CASCADE;
