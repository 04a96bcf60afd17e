import { runCommand } from "./run-command.ts";

// `fleetgate seed --demo`: the only seed there is, but it is named, so a bare `seed` changes nothing.
export async function run(options: { readonly demo?: boolean }): Promise<void> {
  if (!options.demo) throw new Error("say what to seed: npx fleetgate seed --demo");
  await runCommand({ command: "seed" });
}
