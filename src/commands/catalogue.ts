import { readFile } from "node:fs/promises";
import { runCommand } from "./run-command.ts";

async function readJson(file: string): Promise<unknown> {
  const text = await readFile(file, "utf8");
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${file} is not JSON: ${(error as Error).message}`);
  }
}

/** `fleetgate catalogue import <file.json>`. The file is read and parsed before the database is opened: a bad file touches nothing. */
export async function importFile(file: string): Promise<void> {
  await runCommand({ command: "catalogue import", catalogue: await readJson(file) });
}

/** `fleetgate catalogue export`: the whole catalogue, private device types included (an operator's command). */
export async function exportAll(): Promise<void> {
  await runCommand({ command: "catalogue export" });
}
