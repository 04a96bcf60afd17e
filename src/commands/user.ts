import { parseArgs } from "node:util";
import { createUser } from "../accounts.ts";
import { loadConfig } from "../config.ts";
import { migrate } from "../db/migrate.ts";
import { openDatabase } from "../db/open.ts";
import { buildModel } from "../model/registry.ts";

const usage = "fleetgate user add <username> --email <email> --password <password> [--admin]";

export async function run(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { email: { type: "string" }, password: { type: "string" }, admin: { type: "boolean" } },
  });
  const [action, username] = positionals;
  if (action !== "add" || !username || !values.email || !values.password) throw new Error(`usage: ${usage}`);
  const db = await openDatabase(loadConfig());
  try {
    await migrate(db);
    const id = await createUser(db, buildModel(), {
      username,
      email: values.email,
      password: values.password,
      isAdmin: values.admin ?? false,
    });
    process.stdout.write(`${JSON.stringify({ id, username })}\n`);
  } finally {
    await db.close();
  }
}
