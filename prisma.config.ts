// Prisma 7 reads its CLI settings from here. Only `prisma generate` runs on this
// project's machines; migrations are applied by fleetgate's own migrator (src/db/migrate.ts).
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
});
