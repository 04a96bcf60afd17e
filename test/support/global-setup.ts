import { randomBytes } from "node:crypto";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { migrate } from "../../src/db/migrate.ts";
import { openPostgres } from "../../src/db/postgres.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** PostgreSQL for this run: a server URL and a migrated template database to copy; null when absent. */
    postgres: { serverUrl: string; template: string } | null;
  }
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function reachable(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

export default async function setup(project: TestProject) {
  const url = process.env.TEST_DATABASE_URL;
  const ci = process.env.CI === "true";
  const problem = url ? await reachable(url) : "TEST_DATABASE_URL is not set";
  if (problem) {
    // In CI the PostgreSQL suite is mandatory; on a laptop it is skipped with a visible note.
    if (ci) throw new Error(`PostgreSQL suite is mandatory in CI: ${problem}`);
    process.stderr.write(`\n  PostgreSQL tests skipped: ${problem}\n\n`);
    project.provide("postgres", null);
    return;
  }
  const serverUrl = url as string;
  const template = `fg_template_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${template}"`);
  const db = openPostgres({ url: withDatabase(serverUrl, template), poolSize: 2 });
  await migrate(db);
  await db.close();
  project.provide("postgres", { serverUrl, template });

  return async () => {
    await admin.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
    await admin.end();
  };
}
