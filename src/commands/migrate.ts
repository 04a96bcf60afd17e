import { runCommand } from "./run-command.ts";

// `fleetgate migrate`. Through a running server it reports "up to date": the server migrated on start.
export async function run(): Promise<void> {
  await runCommand({ command: "migrate" });
}
