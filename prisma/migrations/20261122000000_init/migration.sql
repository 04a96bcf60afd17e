-- CreateTable
CREATE TABLE "actor" (
    "id" SERIAL NOT NULL,
    CONSTRAINT "actor_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor" INTEGER NOT NULL,
    "username" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "password" TEXT NOT NULL,
    "jwt_secret" TEXT NOT NULL,
    "is_admin" BOOLEAN NOT NULL DEFAULT false,
    CONSTRAINT "user_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "organization" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "name" TEXT NOT NULL,
    "handle" TEXT NOT NULL,
    CONSTRAINT "organization_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "organization_membership" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "user" INTEGER NOT NULL,
    "is_member_of__organization" INTEGER NOT NULL,
    "role" TEXT NOT NULL DEFAULT 'member',
    CONSTRAINT "organization_membership_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "device_type" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "arch" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "is_private" BOOLEAN NOT NULL DEFAULT false,
    "logo" TEXT,
    "catalogue" JSONB NOT NULL DEFAULT '{}',
    CONSTRAINT "device_type_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "device_type_alias" (
    "id" SERIAL NOT NULL,
    "device_type" INTEGER NOT NULL,
    "is_referenced_by__alias" TEXT NOT NULL,
    CONSTRAINT "device_type_alias_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "application_type" (
    "id" SERIAL NOT NULL,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "supports_multicontainer" BOOLEAN NOT NULL DEFAULT true,
    "is_legacy" BOOLEAN NOT NULL DEFAULT false,
    CONSTRAINT "application_type_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "application" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "user" INTEGER,
    "depends_on__application" INTEGER,
    "actor" INTEGER NOT NULL,
    "organization" INTEGER NOT NULL,
    "app_name" TEXT NOT NULL,
    "slug" TEXT NOT NULL,
    "git_repository" TEXT,
    "application_type" INTEGER,
    "is_for__device_type" INTEGER NOT NULL,
    "should_track_latest_release" BOOLEAN NOT NULL DEFAULT true,
    "should_be_running__release" INTEGER,
    "is_public" BOOLEAN NOT NULL DEFAULT false,
    "is_accessible_by_support_until__date" TIMESTAMPTZ(6),
    CONSTRAINT "application_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "release" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "belongs_to__application" INTEGER NOT NULL,
    "is_created_by__user" INTEGER,
    "commit" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "source" TEXT NOT NULL DEFAULT 'cloud',
    "is_final" BOOLEAN NOT NULL DEFAULT true,
    "is_invalidated" BOOLEAN NOT NULL DEFAULT false,
    "is_passing_tests" BOOLEAN NOT NULL DEFAULT true,
    "semver" TEXT NOT NULL DEFAULT '0.0.0',
    "note" TEXT,
    "start_timestamp" TIMESTAMPTZ(6),
    "end_timestamp" TIMESTAMPTZ(6),
    CONSTRAINT "release_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "service_instance" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "service_type" TEXT NOT NULL,
    "ip_address" TEXT NOT NULL,
    "last_heartbeat" TIMESTAMPTZ(6),
    CONSTRAINT "service_instance_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "supervisor_release" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "supervisor_version" TEXT NOT NULL,
    "image_name" TEXT NOT NULL,
    "is_for__device_type" INTEGER NOT NULL,
    "note" TEXT,
    "is_public" BOOLEAN NOT NULL DEFAULT true,
    CONSTRAINT "supervisor_release_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "device" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "belongs_to__application" INTEGER NOT NULL,
    "belongs_to__user" INTEGER,
    "is_managed_by__device" INTEGER,
    "actor" INTEGER NOT NULL,
    "should_be_running__release" INTEGER,
    "device_name" TEXT NOT NULL,
    "is_of__device_type" INTEGER NOT NULL,
    "uuid" TEXT NOT NULL,
    "is_running__release" INTEGER,
    "note" TEXT,
    "local_id" TEXT,
    "status" TEXT,
    "is_online" BOOLEAN NOT NULL DEFAULT false,
    "last_connectivity_event" TIMESTAMPTZ(6),
    "is_connected_to_vpn" BOOLEAN NOT NULL DEFAULT false,
    "last_vpn_event" TIMESTAMPTZ(6),
    "ip_address" TEXT,
    "mac_address" TEXT,
    "public_address" TEXT,
    "os_version" TEXT,
    "os_variant" TEXT,
    "supervisor_version" TEXT,
    "should_be_managed_by__supervisor_release" INTEGER,
    "is_managed_by__service_instance" INTEGER,
    "provisioning_progress" INTEGER,
    "provisioning_state" TEXT,
    "download_progress" INTEGER,
    "is_web_accessible" BOOLEAN NOT NULL DEFAULT false,
    "longitude" TEXT,
    "latitude" TEXT,
    "location" TEXT,
    "custom_longitude" TEXT,
    "custom_latitude" TEXT,
    "logs_channel" TEXT,
    "is_locked_until__date" TIMESTAMPTZ(6),
    "is_accessible_by_support_until__date" TIMESTAMPTZ(6),
    "is_active" BOOLEAN NOT NULL DEFAULT true,
    "api_heartbeat_state" TEXT NOT NULL DEFAULT 'unknown',
    "memory_usage" INTEGER,
    "memory_total" INTEGER,
    "storage_block_device" TEXT,
    "storage_usage" INTEGER,
    "storage_total" INTEGER,
    "cpu_temp" INTEGER,
    "cpu_usage" INTEGER,
    "cpu_id" TEXT,
    "is_undervolted" BOOLEAN NOT NULL DEFAULT false,
    "supervisor_api_address" TEXT,
    "supervisor_api_port" INTEGER,
    "supervisor_api_key_ciphertext" TEXT,
    CONSTRAINT "device_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "device_tag" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "device" INTEGER NOT NULL,
    "tag_key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    CONSTRAINT "device_tag_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "application_tag" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "application" INTEGER NOT NULL,
    "tag_key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    CONSTRAINT "application_tag_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "device_environment_variable" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "device" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    CONSTRAINT "device_environment_variable_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "application_environment_variable" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "application" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    CONSTRAINT "application_environment_variable_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_key" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "is_of__actor" INTEGER NOT NULL,
    "name" TEXT,
    "description" TEXT,
    "expiry_date" TIMESTAMPTZ(6),
    "key_hash" TEXT NOT NULL,
    CONSTRAINT "api_key_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "user_actor_key" ON "user"("actor");

-- CreateIndex
CREATE UNIQUE INDEX "user_username_key" ON "user"("username");

-- CreateIndex
CREATE UNIQUE INDEX "organization_handle_key" ON "organization"("handle");

-- CreateIndex
CREATE INDEX "organization_membership_user_id_idx" ON "organization_membership"("user", "id");

-- CreateIndex
CREATE INDEX "organization_membership_is_member_of__organization_id_idx" ON "organization_membership"("is_member_of__organization", "id");

-- CreateIndex
CREATE UNIQUE INDEX "organization_membership_user_is_member_of__organization_key" ON "organization_membership"("user", "is_member_of__organization");

-- CreateIndex
CREATE UNIQUE INDEX "device_type_slug_key" ON "device_type"("slug");

-- CreateIndex
CREATE UNIQUE INDEX "device_type_alias_is_referenced_by__alias_key" ON "device_type_alias"("is_referenced_by__alias");

-- CreateIndex
CREATE INDEX "device_type_alias_device_type_id_idx" ON "device_type_alias"("device_type", "id");

-- CreateIndex
CREATE UNIQUE INDEX "application_type_slug_key" ON "application_type"("slug");

-- CreateIndex
CREATE UNIQUE INDEX "application_actor_key" ON "application"("actor");

-- CreateIndex
CREATE UNIQUE INDEX "application_slug_key" ON "application"("slug");

-- CreateIndex
CREATE INDEX "application_user_id_idx" ON "application"("user", "id");

-- CreateIndex
CREATE INDEX "application_depends_on__application_id_idx" ON "application"("depends_on__application", "id");

-- CreateIndex
CREATE INDEX "application_organization_id_idx" ON "application"("organization", "id");

-- CreateIndex
CREATE INDEX "application_application_type_id_idx" ON "application"("application_type", "id");

-- CreateIndex
CREATE INDEX "application_is_for__device_type_id_idx" ON "application"("is_for__device_type", "id");

-- CreateIndex
CREATE INDEX "application_should_be_running__release_id_idx" ON "application"("should_be_running__release", "id");

-- CreateIndex
CREATE INDEX "release_belongs_to__application_id_idx" ON "release"("belongs_to__application", "id");

-- CreateIndex
CREATE INDEX "release_is_created_by__user_id_idx" ON "release"("is_created_by__user", "id");

-- CreateIndex
CREATE UNIQUE INDEX "release_belongs_to__application_commit_key" ON "release"("belongs_to__application", "commit");

-- CreateIndex
CREATE INDEX "supervisor_release_is_for__device_type_id_idx" ON "supervisor_release"("is_for__device_type", "id");

-- CreateIndex
CREATE UNIQUE INDEX "supervisor_release_is_for__device_type_supervisor_version_key" ON "supervisor_release"("is_for__device_type", "supervisor_version");

-- CreateIndex
CREATE UNIQUE INDEX "device_actor_key" ON "device"("actor");

-- CreateIndex
CREATE UNIQUE INDEX "device_uuid_key" ON "device"("uuid");

-- CreateIndex
CREATE INDEX "device_belongs_to__application_id_idx" ON "device"("belongs_to__application", "id");

-- CreateIndex
CREATE INDEX "device_belongs_to__user_id_idx" ON "device"("belongs_to__user", "id");

-- CreateIndex
CREATE INDEX "device_is_managed_by__device_id_idx" ON "device"("is_managed_by__device", "id");

-- CreateIndex
CREATE INDEX "device_should_be_running__release_id_idx" ON "device"("should_be_running__release", "id");

-- CreateIndex
CREATE INDEX "device_is_of__device_type_id_idx" ON "device"("is_of__device_type", "id");

-- CreateIndex
CREATE INDEX "device_is_running__release_id_idx" ON "device"("is_running__release", "id");

-- CreateIndex
CREATE INDEX "device_should_be_managed_by__supervisor_release_id_idx" ON "device"("should_be_managed_by__supervisor_release", "id");

-- CreateIndex
CREATE INDEX "device_is_managed_by__service_instance_id_idx" ON "device"("is_managed_by__service_instance", "id");

-- CreateIndex
CREATE INDEX "device_tag_device_id_idx" ON "device_tag"("device", "id");

-- CreateIndex
CREATE UNIQUE INDEX "device_tag_device_tag_key_key" ON "device_tag"("device", "tag_key");

-- CreateIndex
CREATE INDEX "application_tag_application_id_idx" ON "application_tag"("application", "id");

-- CreateIndex
CREATE UNIQUE INDEX "application_tag_application_tag_key_key" ON "application_tag"("application", "tag_key");

-- CreateIndex
CREATE INDEX "device_environment_variable_device_id_idx" ON "device_environment_variable"("device", "id");

-- CreateIndex
CREATE UNIQUE INDEX "device_environment_variable_device_name_key" ON "device_environment_variable"("device", "name");

-- CreateIndex
CREATE INDEX "application_environment_variable_application_id_idx" ON "application_environment_variable"("application", "id");

-- CreateIndex
CREATE UNIQUE INDEX "application_environment_variable_application_name_key" ON "application_environment_variable"("application", "name");

-- CreateIndex
CREATE UNIQUE INDEX "api_key_key_hash_key" ON "api_key"("key_hash");

-- CreateIndex
CREATE INDEX "api_key_is_of__actor_id_idx" ON "api_key"("is_of__actor", "id");

-- AddForeignKey
ALTER TABLE "user" ADD CONSTRAINT "user_actor_fkey" FOREIGN KEY ("actor") REFERENCES "actor"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "organization_membership" ADD CONSTRAINT "organization_membership_user_fkey" FOREIGN KEY ("user") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "organization_membership" ADD CONSTRAINT "organization_membership_is_member_of__organization_fkey" FOREIGN KEY ("is_member_of__organization") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "device_type_alias" ADD CONSTRAINT "device_type_alias_device_type_fkey" FOREIGN KEY ("device_type") REFERENCES "device_type"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "application" ADD CONSTRAINT "application_actor_fkey" FOREIGN KEY ("actor") REFERENCES "actor"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "application" ADD CONSTRAINT "application_user_fkey" FOREIGN KEY ("user") REFERENCES "user"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "application" ADD CONSTRAINT "application_depends_on__application_fkey" FOREIGN KEY ("depends_on__application") REFERENCES "application"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "application" ADD CONSTRAINT "application_organization_fkey" FOREIGN KEY ("organization") REFERENCES "organization"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "application" ADD CONSTRAINT "application_application_type_fkey" FOREIGN KEY ("application_type") REFERENCES "application_type"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "application" ADD CONSTRAINT "application_is_for__device_type_fkey" FOREIGN KEY ("is_for__device_type") REFERENCES "device_type"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "application" ADD CONSTRAINT "application_should_be_running__release_fkey" FOREIGN KEY ("should_be_running__release") REFERENCES "release"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "release" ADD CONSTRAINT "release_belongs_to__application_fkey" FOREIGN KEY ("belongs_to__application") REFERENCES "application"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "release" ADD CONSTRAINT "release_is_created_by__user_fkey" FOREIGN KEY ("is_created_by__user") REFERENCES "user"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "supervisor_release" ADD CONSTRAINT "supervisor_release_is_for__device_type_fkey" FOREIGN KEY ("is_for__device_type") REFERENCES "device_type"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "device" ADD CONSTRAINT "device_actor_fkey" FOREIGN KEY ("actor") REFERENCES "actor"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "device" ADD CONSTRAINT "device_belongs_to__application_fkey" FOREIGN KEY ("belongs_to__application") REFERENCES "application"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "device" ADD CONSTRAINT "device_belongs_to__user_fkey" FOREIGN KEY ("belongs_to__user") REFERENCES "user"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "device" ADD CONSTRAINT "device_is_managed_by__device_fkey" FOREIGN KEY ("is_managed_by__device") REFERENCES "device"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "device" ADD CONSTRAINT "device_should_be_running__release_fkey" FOREIGN KEY ("should_be_running__release") REFERENCES "release"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "device" ADD CONSTRAINT "device_is_running__release_fkey" FOREIGN KEY ("is_running__release") REFERENCES "release"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "device" ADD CONSTRAINT "device_is_of__device_type_fkey" FOREIGN KEY ("is_of__device_type") REFERENCES "device_type"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "device" ADD CONSTRAINT "device_should_be_managed_by__supervisor_release_fkey" FOREIGN KEY ("should_be_managed_by__supervisor_release") REFERENCES "supervisor_release"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "device" ADD CONSTRAINT "device_is_managed_by__service_instance_fkey" FOREIGN KEY ("is_managed_by__service_instance") REFERENCES "service_instance"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "device_tag" ADD CONSTRAINT "device_tag_device_fkey" FOREIGN KEY ("device") REFERENCES "device"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "application_tag" ADD CONSTRAINT "application_tag_application_fkey" FOREIGN KEY ("application") REFERENCES "application"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "device_environment_variable" ADD CONSTRAINT "device_environment_variable_device_fkey" FOREIGN KEY ("device") REFERENCES "device"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "application_environment_variable" ADD CONSTRAINT "application_environment_variable_application_fkey" FOREIGN KEY ("application") REFERENCES "application"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_key" ADD CONSTRAINT "api_key_is_of__actor_fkey" FOREIGN KEY ("is_of__actor") REFERENCES "actor"("id") ON DELETE CASCADE ON UPDATE CASCADE;
