import type { Command } from "commander";
import { DEFAULT_TIMINGS } from "../supervisor/timings.ts";
import { CURRENT_SUPERVISOR_VERSION } from "../supervisor/versions.ts";
import { byDefault, documented, givenArgs } from "./help.ts";

// The device side: one simulated supervisor, or a fleet of them in one process. Their flags are
// validated by their own parsers (src/supervisor/options.ts, src/commands/fleet.ts), which apply
// the defaults shown here; commander documents and recognises them.

/** The flags `supervisor` and `fleet` share, with the same meaning. */
function simulationOptions(command: Command): Command {
  return command
    .option(
      "--supervisor-version <x.y.z>",
      `the supervisor version to simulate: only what it had is served, and it is reported${byDefault(CURRENT_SUPERVISOR_VERSION)}`,
    )
    .option(
      "--services <n>",
      `services in the release: 2+ is multi-container, 0 none installed${byDefault(1)}`,
    )
    .option("--poll-interval <s>", `seconds between polls of the target; fractions allowed${byDefault(60)}`)
    .option("--heartbeat-interval <s>", `seconds between heartbeat state reports${byDefault(30)}`)
    .option("--download-ms <ms>", `simulated download time${byDefault(DEFAULT_TIMINGS.downloadMs)}`)
    .option("--install-ms <ms>", `simulated install time${byDefault(DEFAULT_TIMINGS.installMs)}`);
}

// A credential on the command line shows in `ps` to every user of the machine, so each can come
// from the environment instead; a flag given on the command line wins over the environment.
export const credentialEnvironment = {
  provisioningKey: "FLEETGATE_PROVISIONING_KEY",
  token: "FLEETGATE_TOKEN",
  apiKey: "SUPERVISOR_API_KEY",
} as const;

const fromEnvironment = (name: string) => ` (or $${name}, which \`ps\` does not show)`;

function managedOptions(command: Command): Command {
  return command
    .option("--api <url>", "the fleetgate cloud to register with and report to (makes the device managed)")
    .option("--fleet <id>", "the id of the fleet the device(s) join")
    .option(
      "--provisioning-key <key>",
      `the fleet's provisioning key (POST /api-key/application/<id>/provisioning)${fromEnvironment(credentialEnvironment.provisioningKey)}`,
    )
    .option(
      "--token <token>",
      `instead of a provisioning key: a user's token, which first creates one${fromEnvironment(credentialEnvironment.token)}`,
    )
    .option(
      "--state-api <v3|v2>",
      `where state reports go: PATCH /device/v3/state as a v17 supervisor reports, or the older /device/v2/<uuid>/state${byDefault("v3")}`,
    );
}

/**
 * The command's arguments, with the credentials its command line left out taken from the
 * environment: a managed device's provisioning key or token (one of them: both set is an error
 * that names them), and the supervisor's own API key. An unmanaged device takes no cloud credential.
 */
export function argsWithCredentials(command: Command, env: NodeJS.ProcessEnv = process.env): string[] {
  const args = givenArgs(command);
  const given = command.opts();
  const set = (name: string) => (env[name] ? env[name] : undefined);
  const hasOption = (long: string) => command.options.some((option) => option.long === long);
  if (!given.unmanaged && given.provisioningKey === undefined && given.token === undefined) {
    const provisioningKey = set(credentialEnvironment.provisioningKey);
    const token = set(credentialEnvironment.token);
    if (provisioningKey && token)
      throw new Error(
        `${credentialEnvironment.provisioningKey} and ${credentialEnvironment.token} are both set: unset one, or give --provisioning-key or --token`,
      );
    if (provisioningKey) args.push("--provisioning-key", provisioningKey);
    if (token) args.push("--token", token);
  }
  const apiKey = set(credentialEnvironment.apiKey);
  if (hasOption("--api-key") && given.apiKey === undefined && apiKey) args.push("--api-key", apiKey);
  return args;
}

const credentialNote = (flags: string) =>
  `Credentials on a command line show in \`ps\` to every user of the machine: ${flags} can come\nfrom the environment instead (each flag's help names its variable).`;

export function addDeviceCommands(program: Command): void {
  const supervisor = program
    .command("supervisor")
    .description(
      'run one simulated device: its supervisor API (v1) over HTTP, one application with an update cycle, and when managed, registration and state reports to a fleetgate cloud. Prints {"uuid","port","apiKey"} once it listens; stops on SIGTERM or Ctrl-C',
    )
    .option("--unmanaged", "no cloud: run one single-container application (--app-id) and read target.json");
  managedOptions(supervisor)
    .option("--device-type <slug>", "managed: the device type to register with (default: the fleet's)")
    .option("--app-id <id>", "unmanaged: the application's id (default: 1)")
    .option(
      "--api-key <key>",
      `the supervisor API key for this run: letters, digits, _${fromEnvironment(credentialEnvironment.apiKey)} (default: the stored key, or a new one)`,
    )
    .option("--uuid <hex>", "the device uuid on first start, 32 or 62 lowercase hex digits (default: random)")
    .option("--host <address>", `where the device API listens${byDefault("127.0.0.1")}`)
    .option("--port <port>", "its port; 0 for any free port (default: $PLATFORM_SUPERVISOR_PORT, else 48484)")
    .option(
      "--data-dir <dir>",
      `where the device keeps supervisor.json, apps/, updates.lock and target.json${byDefault("data/supervisor")}`,
    );
  simulationOptions(supervisor)
    .option(
      "--step-ms <ms>",
      `simulated time to stop or start the application${byDefault(DEFAULT_TIMINGS.stepMs)}`,
    )
    .option("--blink-ms <ms>", `how long /v1/blink blinks${byDefault(DEFAULT_TIMINGS.blinkMs)}`)
    .action(async (_options, command: Command) =>
      (await import("./supervisor.ts")).run(argsWithCredentials(command)),
    );
  documented(
    supervisor,
    [
      "npx fleetgate supervisor --unmanaged --api-key secret --port 0 --data-dir ./dev1",
      "npx fleetgate supervisor --api http://127.0.0.1:3000 --provisioning-key <key> --fleet 3 --data-dir ./dev2",
    ],
    `Give either --unmanaged or --api <url> with --fleet and one of --provisioning-key or --token.\n${credentialNote("--provisioning-key, --token and --api-key")}`,
  );

  const fleet = program
    .command("fleet")
    .description(
      "run many simulated devices of one fleet in this process, each a full supervisor with its own data directory, loopback port and key, reporting to the cloud; Ctrl-C or SIGTERM stops them all",
    );
  managedOptions(fleet)
    .option("--devices <n>", "how many devices, 1 to 10,000")
    .option("--json", 'print each device\'s {"uuid","port","apiKey"} once all listen')
    .option(
      "--data-dir <dir>",
      `device n keeps its identity in <dir>/<n>, so a second run reuses them${byDefault("data/fleet")}`,
    )
    .option("--concurrency <n>", `how many devices start at once${byDefault(16)}`);
  simulationOptions(fleet)
    .option("--delay-ms <ms>", `fault: every device API answer is this late${byDefault(0)}`)
    .option("--error-rate <0-1>", `fault: this share of device API requests is answered 503${byDefault(0)}`)
    .option(
      "--locked-share <0-1>",
      `fault: the first devices' applications hold the update lock${byDefault(0)}`,
    )
    .option("--offline-share <0-1>", `fault: the last devices go away once started${byDefault(0)}`)
    .action(async (_options, command: Command) =>
      (await import("./fleet.ts")).run(argsWithCredentials(command)),
    );
  documented(
    fleet,
    [
      "npx fleetgate fleet --api http://127.0.0.1:3000 --provisioning-key <key> --fleet 1 --devices 50 --json",
      "npx fleetgate fleet --api http://127.0.0.1:3000 --token <token> --fleet 1 --devices 200 --error-rate 0.05",
    ],
    `--api, --fleet, --devices and one of --provisioning-key or --token are required. A list such as\n--supervisor-version 17.1.4,6.6.0 mixes versions: device n runs the (n mod count)th.\n${credentialNote("--provisioning-key and --token")}`,
  );
}
