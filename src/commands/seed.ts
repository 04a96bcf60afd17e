import { parseArgs } from "node:util";
import { loadConfig } from "../config.ts";
import { migrate } from "../db/migrate.ts";
import { openDatabase } from "../db/open.ts";
import { seedDemo } from "../seed/demo.ts";

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { demo: { type: "boolean" } } });
  if (!values.demo) throw new Error("say what to seed: fleetgate seed --demo");
  const db = await openDatabase(loadConfig());
  try {
    await migrate(db);
    const summary = await seedDemo(db);
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    await db.close();
  }
}
