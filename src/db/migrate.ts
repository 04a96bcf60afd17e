import { createHash, randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Database } from "./database.ts";

export const migrationsDir = fileURLToPath(new URL("../../prisma/migrations/", import.meta.url));

// The same key `prisma migrate` locks, so our migrator and Prisma's never run at once.
const PRISMA_ADVISORY_LOCK = 72707369;

// Prisma's own bookkeeping table, column for column, so `prisma migrate status` agrees with us.
const bookkeeping = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export interface Migration {
  readonly name: string;
  readonly sql: string;
  /** SHA-256 of migration.sql, as Prisma records it. */
  readonly checksum: string;
}

export function readMigrations(dir = migrationsDir): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(`${dir}/${name}/migration.sql`, "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

/** Whether the database has never been migrated: this is its first start. */
export async function isNewDatabase(db: Database): Promise<boolean> {
  const [row] = await db.query<{ fresh: boolean }>({
    text: `SELECT to_regclass('"_prisma_migrations"') IS NULL AS "fresh"`,
    values: [],
  });
  return row?.fresh === true;
}

/**
 * Applies every pending migration, each in its own transaction under the advisory lock,
 * and returns the names applied. A migration that fails leaves nothing behind. System write: the
 * migrator's own table, and the migrations' SQL.
 */
export async function migrate(db: Database, migrations = readMigrations()): Promise<string[]> {
  if (await allApplied(db, migrations)) return [];
  const applied: string[] = [];
  for (const migration of migrations) {
    const didApply = await db.transaction(async (tx) => {
      // A migration may rebuild a large table, and waits its turn behind another process's:
      // neither is a write a client waits for, so neither has the write time-out.
      await tx.script("SET LOCAL statement_timeout = 0");
      await tx.query({ text: "SELECT pg_advisory_xact_lock($1)", values: [PRISMA_ADVISORY_LOCK] });
      await tx.script(bookkeeping);
      const [done] = await tx.query<{ checksum: string }>({
        text: `SELECT checksum FROM "_prisma_migrations"
               WHERE migration_name = $1 AND finished_at IS NOT NULL AND rolled_back_at IS NULL`,
        values: [migration.name],
      });
      if (done) {
        if (done.checksum !== migration.checksum) {
          throw new Error(`Migration ${migration.name} was changed after it was applied`);
        }
        return false;
      }
      try {
        await tx.script(migration.sql);
      } catch (error) {
        throw new Error(`Migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
      }
      await tx.query({
        text: `INSERT INTO "_prisma_migrations"
                 (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
               VALUES ($1, $2, $3, now(), now(), 1)`,
        values: [randomUUID(), migration.checksum, migration.name],
      });
      return true;
    });
    if (didApply) applied.push(migration.name);
  }
  return applied;
}

/**
 * Every start asks this first: one statement, no lock, no transaction. Anything else (no bookkeeping
 * table yet, a pending or changed migration, an error) takes the full path above, which decides
 * under the lock and reports a changed migration.
 */
async function allApplied(db: Database, migrations: readonly Migration[]): Promise<boolean> {
  try {
    const rows = await db.query<{ migration_name: string; checksum: string }>({
      text: `SELECT migration_name, checksum FROM "_prisma_migrations"
             WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
      values: [],
    });
    const done = new Map(rows.map((row) => [row.migration_name, row.checksum]));
    return migrations.every((migration) => done.get(migration.name) === migration.checksum);
  } catch {
    return false;
  }
}
