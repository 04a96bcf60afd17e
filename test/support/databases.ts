import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import type { Database } from "../../src/db/database.ts";
import { openEmbedded } from "../../src/db/embedded.ts";
import { migrate } from "../../src/db/migrate.ts";
import { openPostgres } from "../../src/db/postgres.ts";
import { withDatabase } from "./global-setup.ts";

export type DatabaseKind = "embedded" | "postgres";

/** Every database the suite runs on: the embedded one always, PostgreSQL when the run has it. */
export const databaseKinds: DatabaseKind[] = inject("postgres") ? ["embedded", "postgres"] : ["embedded"];

export interface TestDatabase {
  readonly db: Database;
  /** The connection URL, for PostgreSQL databases (to start a real server process on it). */
  readonly url: string | undefined;
  /** Closes the connections and removes the database. */
  drop(): Promise<void>;
}

async function adminQuery(serverUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** A database of its own for one test file: migrated unless `empty`. */
export async function freshDatabase(
  kind: DatabaseKind,
  options: { empty?: boolean } = {},
): Promise<TestDatabase> {
  if (kind === "embedded") {
    const db = await openEmbedded(undefined);
    if (!options.empty) await migrate(db);
    return { db, url: undefined, drop: () => db.close() };
  }
  const postgres = inject("postgres");
  if (!postgres) throw new Error("PostgreSQL is not available in this run");
  const name = `fg_test_${randomBytes(6).toString("hex")}`;
  await adminQuery(
    postgres.serverUrl,
    options.empty ? `CREATE DATABASE "${name}"` : `CREATE DATABASE "${name}" TEMPLATE "${postgres.template}"`,
  );
  const url = withDatabase(postgres.serverUrl, name);
  const db = openPostgres({ url, poolSize: 4 });
  return {
    db,
    url,
    async drop() {
      await db.close();
      await adminQuery(postgres.serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}
