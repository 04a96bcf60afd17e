-- CPU architectures become rows that device types link to (balena-sdk expands
-- device_type/is_of__cpu_architecture); the device type's `arch` is now read from the link.

-- CreateTable
CREATE TABLE "cpu_architecture" (
    "id" SERIAL NOT NULL,
    "slug" TEXT NOT NULL,
    CONSTRAINT "cpu_architecture_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "cpu_architecture_slug_key" ON "cpu_architecture"("slug");

INSERT INTO "cpu_architecture" ("slug") SELECT DISTINCT "arch" FROM "device_type" ORDER BY 1;

ALTER TABLE "device_type" ADD COLUMN "is_of__cpu_architecture" INTEGER;
UPDATE "device_type" dt SET "is_of__cpu_architecture" = ca."id" FROM "cpu_architecture" ca WHERE ca."slug" = dt."arch";
ALTER TABLE "device_type" ALTER COLUMN "is_of__cpu_architecture" SET NOT NULL;
ALTER TABLE "device_type" DROP COLUMN "arch";

-- CreateIndex
CREATE INDEX "device_type_is_of__cpu_architecture_id_idx" ON "device_type"("is_of__cpu_architecture", "id");

-- AddForeignKey
ALTER TABLE "device_type" ADD CONSTRAINT "device_type_is_of__cpu_architecture_fkey" FOREIGN KEY ("is_of__cpu_architecture") REFERENCES "cpu_architecture"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- Fleets get a uuid too (balena-sdk looks a fleet up by slug or uuid).
ALTER TABLE "application" ADD COLUMN "uuid" TEXT NOT NULL DEFAULT md5(random()::text || clock_timestamp()::text);

-- CreateIndex
CREATE UNIQUE INDEX "application_uuid_key" ON "application"("uuid");
