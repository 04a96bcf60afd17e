// `fleetgate <command> [options]`. The command line is commander's: it is maintained, has no
// dependencies, and generates each command's --help from the same definitions that parse it, so
// the help lists every option and cannot fall behind. Each command's work lives in
// src/commands/<command>.ts and loads only when that command runs.
import { Command } from "commander";
import packageJson from "../package.json" with { type: "json" };
import { addDeviceCommands } from "./commands/device-commands.ts";
import { readEnvFile } from "./commands/env-file.ts";
import { failureMessage } from "./commands/failure-message.ts";
import { documented } from "./commands/help.ts";
import { addServerCommands } from "./commands/server-commands.ts";

const program = new Command("fleetgate")
  .description(
    "fleetgate: the cloud data API of a device-fleet platform (OData, GraphQL, and remote control of devices)",
  )
  .version(packageJson.version, "-v, --version", "print fleetgate's version")
  .helpOption("-h, --help", "show this help")
  .helpCommand("help [command]", "show the help of a command");
addServerCommands(program);
addDeviceCommands(program);
documented(
  program,
  [
    "npm start                       # the server on http://127.0.0.1:3000",
    "npm run seed                    # the demo data",
    "npx fleetgate user add --help   # the options of one command",
  ],
  "Inside the project, run `npx fleetgate …` (or `node bin/fleetgate.js …`).",
);

// Without a command, the help is the answer, not an error.
const argv = process.argv.length > 2 ? process.argv : [...process.argv, "--help"];
try {
  readEnvFile();
  await program.parseAsync(argv);
} catch (error) {
  // What a command's work threw (commander exits by itself on a bad command line).
  process.stderr.write(`fleetgate ${process.argv[2]}: ${failureMessage(error)}\n`);
  process.exit(1);
}
