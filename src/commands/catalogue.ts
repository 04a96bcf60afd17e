import { readFile } from "node:fs/promises";
import { adminPermissions } from "../auth/permissions.ts";
import { importCatalogue } from "../catalogue/import.ts";
import { readEntries } from "../catalogue/read.ts";
import { loadConfig } from "../config.ts";
import type { Database } from "../db/database.ts";
import { migrate } from "../db/migrate.ts";
import { openDatabase } from "../db/open.ts";
import { buildModel } from "../model/registry.ts";

const usage = "fleetgate catalogue import <file.json> | fleetgate catalogue export";

async function readJson(file: string): Promise<unknown> {
  const text = await readFile(file, "utf8");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${file} is not JSON: ${(error as Error).message}`);
  }
}

async function withDatabase(work: (db: Database) => Promise<void>): Promise<void> {
  const db = await openDatabase(loadConfig());
  try {
    await migrate(db);
    await work(db);
  } finally {
    await db.close();
  }
}

export async function run(args: string[]): Promise<void> {
  const [action, file, ...rest] = args;
  if (action === "import" && file && rest.length === 0) {
    // The file is read and parsed before the database is opened: a bad file touches nothing.
    const json = await readJson(file);
    await withDatabase(async (db) => {
      process.stdout.write(`${JSON.stringify(await importCatalogue(db, json))}\n`);
    });
  } else if (action === "export" && !file) {
    // The whole catalogue, private device types included: this is an operator's command.
    await withDatabase(async (db) => {
      const entries = await readEntries(db, buildModel(), adminPermissions);
      process.stdout.write(`${JSON.stringify(entries, null, 2)}\n`);
    });
  } else throw new Error(`usage: ${usage}`);
}
