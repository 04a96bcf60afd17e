import { parseArgs } from "node:util";
import { createOrganization } from "../accounts.ts";
import { loadConfig } from "../config.ts";
import { migrate } from "../db/migrate.ts";
import { openDatabase } from "../db/open.ts";
import { buildModel } from "../model/registry.ts";

const usage = "fleetgate org add <handle> [--name <name>] [--owner <username>]";

export async function run(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { name: { type: "string" }, owner: { type: "string" } },
  });
  const [action, handle] = positionals;
  if (action !== "add" || !handle) throw new Error(`usage: ${usage}`);
  const db = await openDatabase(loadConfig());
  try {
    await migrate(db);
    const id = await createOrganization(db, buildModel(), {
      handle,
      name: values.name ?? handle,
      owner: values.owner,
    });
    process.stdout.write(`${JSON.stringify({ id, handle })}\n`);
  } finally {
    await db.close();
  }
}
