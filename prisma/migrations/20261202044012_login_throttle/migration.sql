-- The login throttle's counts, shared by every instance (src/auth/throttle-store.ts), so that N
-- instances give an account and an address their allowances once, not N times.
-- CreateTable
CREATE TABLE "login_throttle" (
    "kind" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "level" DOUBLE PRECISION NOT NULL,
    "at" DOUBLE PRECISION NOT NULL,
    "failed_at" DOUBLE PRECISION,
    "over_since" DOUBLE PRECISION NOT NULL,
    "blocked_until" DOUBLE PRECISION NOT NULL,
    "pending" INTEGER NOT NULL,
    "pending_until" DOUBLE PRECISION NOT NULL,
    "used_at" DOUBLE PRECISION NOT NULL,

    CONSTRAINT "login_throttle_pkey" PRIMARY KEY ("kind","key")
);

-- CreateIndex
CREATE INDEX "login_throttle_kind_used_at_idx" ON "login_throttle"("kind", "used_at");
