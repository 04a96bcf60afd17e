-- CreateTable
CREATE TABLE "billing_event" (
    "id" SERIAL NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "kind" TEXT NOT NULL,
    "device" INTEGER NOT NULL,
    "device_uuid" TEXT NOT NULL,
    "is_caused_by__actor" INTEGER,
    CONSTRAINT "billing_event_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "billing_event_device_id_idx" ON "billing_event"("device", "id");
