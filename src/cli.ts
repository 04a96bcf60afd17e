// `fleetgate <command> [options]`: each command lives in src/commands/<command>.ts.
const commands: Record<string, () => Promise<{ run(args: string[]): Promise<void> }>> = {
  serve: () => import("./commands/serve.ts"),
  migrate: () => import("./commands/migrate.ts"),
  seed: () => import("./commands/seed.ts"),
  user: () => import("./commands/user.ts"),
  org: () => import("./commands/org.ts"),
  catalogue: () => import("./commands/catalogue.ts"),
  supervisor: () => import("./commands/supervisor.ts"),
  fleet: () => import("./commands/fleet.ts"),
};

const usage = `Usage: fleetgate <command> [options]

Commands:
  serve           run the API server (applies pending migrations first)
  migrate         apply pending database migrations and exit
  seed --demo     load the demo catalogue, organization, fleets, releases and devices
  user add <username> --email <email> --password <password> [--admin]
                  create a user (and their personal organization)
  org add <handle> [--name <name>] [--owner <username>]
                  create an organization, optionally with its first owner
  catalogue import <file.json>
                  validate a catalogue (a /config document or a list of entries) and load it in one transaction
  catalogue export
                  print the catalogue as a JSON list of entries
  supervisor --unmanaged [--api-key <key>] [--app-id <id>] [options]
  supervisor --api <url> (--provisioning-key <key> | --token <token>) --fleet <id> [--device-type <slug>] [options]
                  run a simulated device's supervisor (its device API); prints {"uuid","port","apiKey"} once it listens
  fleet --api <url> (--provisioning-key <key> | --token <token>) --fleet <id> --devices <n> [--json] [options]
                  run N simulated devices of one fleet in this process (see the README for fault flags)
`;

const [name, ...args] = process.argv.slice(2);
const load = name ? commands[name] : undefined;
if (!load) {
  process.stderr.write(usage);
  process.exit(name && name !== "help" && name !== "--help" ? 2 : 0);
}
try {
  const command = await load();
  await command.run(args);
} catch (error) {
  process.stderr.write(`fleetgate ${name}: ${(error as Error).message}\n`);
  process.exit(1);
}
