import type { Command } from "commander";
import { databaseEnvironment, documented } from "./help.ts";

// The commands that serve or change the cloud's database. Each action loads its implementation
// only when it runs, so `--help` (and every other command) starts nothing and loads little.

const serveEnvironment = `Environment (read once at start; the README's Configuration table lists all of them):
  HOST            address to listen on (default: 127.0.0.1)
  PORT            port to listen on; 0 for any free port (default: 3000)
  DATABASE_URL    PostgreSQL connection URL (default: unset: the embedded database in DATA_DIR)
  DATA_DIR        directory of the embedded database (default: ./data)
  ADMIN_USERNAME  username of the admin created on the first start (default: admin)
  ADMIN_PASSWORD  that admin's password (default: generated, and printed once on the first start)
  LOG_LEVEL       fatal, error, warn, info, debug, trace or silent (default: info)`;

export function addServerCommands(program: Command): void {
  addServe(program);
  addMigrate(program);
  addSeed(program);
  addUser(program);
  addOrg(program);
  addCatalogue(program);
}

function addServe(program: Command): void {
  documented(
    program
      .command("serve")
      .description(
        "run the API server: applies pending migrations, creates the admin on the first start, loads the shipped device-type catalogue into a new database, then serves OData, GraphQL and the proxy until SIGTERM or Ctrl-C",
      )
      .action(async () => (await import("./serve.ts")).run()),
    [
      "npm start",
      "PORT=8080 npx fleetgate serve",
      "DATABASE_URL=postgres://postgres@127.0.0.1:5432/fleetgate npx fleetgate serve",
    ],
    serveEnvironment,
  );
}

function addMigrate(program: Command): void {
  documented(
    program
      .command("migrate")
      .description("apply pending database migrations and exit")
      .action(async () => (await import("./migrate.ts")).run()),
    [
      "npx fleetgate migrate",
      "DATABASE_URL=postgres://postgres@127.0.0.1:5432/fleetgate npx fleetgate migrate",
    ],
    databaseEnvironment,
  );
}

function addSeed(program: Command): void {
  documented(
    program
      .command("seed")
      .description(
        "load the demo data: the user demo (password demo-password), its organization, 3 fleets, 9 releases and 60 devices, on top of the device-type catalogue; running it again changes nothing",
      )
      .option("--demo", "seed the demo data (the only seed; required, so a bare `seed` changes nothing)")
      .action(async (options: { demo?: boolean }) => (await import("./seed.ts")).run(options)),
    ["npm run seed", "npx fleetgate seed --demo"],
    databaseEnvironment,
  );
}

function addUser(program: Command): void {
  const user = documented(program.command("user").description("manage users"), [
    "npx fleetgate user add carol --email carol@example.com --password 'a long password'",
  ]);
  documented(
    user
      .command("add")
      .description("create a user and their personal organization (its handle is the username)")
      .argument("<username>", "the new user's username")
      .requiredOption("--email <email>", "their email address")
      .requiredOption("--password <password>", "their password (at least 8 characters)")
      .option("--admin", "make them an admin, who sees and changes everything (default: not an admin)")
      .action(async (username: string, options: { email: string; password: string; admin?: boolean }) =>
        (await import("./user.ts")).add({ username, ...options, admin: options.admin ?? false }),
      ),
    [
      "npx fleetgate user add carol --email carol@example.com --password 'a long password'",
      "npx fleetgate user add root --email root@example.com --password 'another password' --admin",
    ],
    databaseEnvironment,
  );
}

function addOrg(program: Command): void {
  const org = documented(program.command("org").description("manage organizations"), [
    "npx fleetgate org add acme --name 'Acme Inc.' --owner carol",
  ]);
  documented(
    org
      .command("add")
      .description("create an organization, optionally with its first owner")
      .argument("<handle>", "the organization's handle (unique; it prefixes its fleets' slugs)")
      .option("--name <name>", "its display name (default: the handle)")
      .option("--owner <username>", "a user who becomes its owner (default: none)")
      .action(async (handle: string, options: { name?: string; owner?: string }) =>
        (await import("./org.ts")).add({ handle, ...options }),
      ),
    ["npx fleetgate org add acme", "npx fleetgate org add acme --name 'Acme Inc.' --owner carol"],
    databaseEnvironment,
  );
}

function addCatalogue(program: Command): void {
  const catalogue = documented(
    program.command("catalogue").description("import or export the device-type catalogue"),
    ["npx fleetgate catalogue export > catalogue.json", "npx fleetgate catalogue import catalogue.json"],
  );
  documented(
    catalogue
      .command("import")
      .description(
        "validate a catalogue (a /config document or a list of device-type entries) and load it in one transaction: each entry creates or replaces the device type with its slug, others stay; an invalid file changes nothing and the error names each JSON path at fault",
      )
      .argument("<file.json>", "the catalogue file")
      .action(async (file: string) => (await import("./catalogue.ts")).importFile(file)),
    [
      "npx fleetgate catalogue import my-boards.json",
      "curl -s http://127.0.0.1:3000/config > config.json && npx fleetgate catalogue import config.json",
    ],
    databaseEnvironment,
  );
  documented(
    catalogue
      .command("export")
      .description(
        "print the whole catalogue, private entries included, as a JSON list that imports back unchanged",
      )
      .action(async () => (await import("./catalogue.ts")).exportAll()),
    ["npx fleetgate catalogue export > catalogue.json"],
    databaseEnvironment,
  );
}
