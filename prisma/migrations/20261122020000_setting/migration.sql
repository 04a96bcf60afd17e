-- CreateTable
CREATE TABLE "setting" (
    "name" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    CONSTRAINT "setting_pkey" PRIMARY KEY ("name")
);
