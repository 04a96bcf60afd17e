import { loadConfig } from "../config.ts";
import { migrate } from "../db/migrate.ts";
import { openDatabase } from "../db/open.ts";

export async function run(): Promise<void> {
  const db = await openDatabase(loadConfig());
  try {
    const applied = await migrate(db);
    process.stdout.write(applied.length ? `Applied ${applied.join(", ")}\n` : "Database is up to date\n");
  } finally {
    await db.close();
  }
}
