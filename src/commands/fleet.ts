import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import { startFleet } from "../supervisor/fleet.ts";
import { DEFAULT_TIMINGS } from "../supervisor/timings.ts";
import { CURRENT_SUPERVISOR_VERSION, parseVersion } from "../supervisor/versions.ts";

const usage = `fleetgate fleet --api <url> (--provisioning-key <key> | --token <token>) --fleet <id> --devices <n>
  [--json] [--data-dir <dir>] [--concurrency <n>] [--supervisor-version <x.y.z[,x.y.z…]>] [--services <n>]
  [--heartbeat-interval <s>] [--poll-interval <s>] [--download-ms <ms>] [--install-ms <ms>] [--state-api <v3|v2>]
  [--delay-ms <ms>] [--error-rate <0-1>] [--locked-share <0-1>] [--offline-share <0-1>]`;

const share = z.coerce.number().min(0).max(1).default(0);
/** The flags and their defaults: `fleetgate fleet --help` is checked against it. */
export const fleetSchema = z.object({
  api: z.url(),
  "provisioning-key": z.string().min(1).optional(),
  token: z.string().min(1).optional(),
  fleet: z.coerce.number().int().positive(),
  devices: z.coerce.number().int().min(1).max(10_000),
  json: z.boolean().default(false),
  "data-dir": z.string().default("data/fleet"),
  concurrency: z.coerce.number().int().min(1).max(256).default(16),
  // A comma-separated list mixes versions: device n runs the (n mod count)th.
  "supervisor-version": z
    .string()
    .default(CURRENT_SUPERVISOR_VERSION)
    .transform((value) => value.split(",").map((version) => version.trim()))
    .refine((versions) => versions.every((version) => parseVersion(version) !== null), "x.y.z[,x.y.z…]"),
  services: z.coerce.number().int().min(0).max(10).default(1),
  "heartbeat-interval": z.coerce.number().positive().default(30),
  "poll-interval": z.coerce.number().positive().default(60),
  "download-ms": z.coerce.number().int().min(0).default(DEFAULT_TIMINGS.downloadMs),
  "install-ms": z.coerce.number().int().min(0).default(DEFAULT_TIMINGS.installMs),
  // Where state reports go: v3 as a v17 supervisor reports, v2 the older endpoint.
  "state-api": z.enum(["v3", "v2"]).default("v3"),
  "delay-ms": z.coerce.number().int().min(0).default(0),
  "error-rate": share,
  "locked-share": share,
  "offline-share": share,
});

const flags = Object.fromEntries(
  [...Object.keys(fleetSchema.shape)].map(
    (name) => [name, { type: name === "json" ? "boolean" : "string" }] as const,
  ),
) as Record<string, { type: "string" | "boolean" }>;

/** A one-line progress bar on a terminal; nothing when stderr is a pipe. */
function progress(started: number, total: number): void {
  if (!process.stderr.isTTY) return;
  const width = 30;
  const filled = Math.round((started / total) * width);
  process.stderr.write(
    `\r[${"#".repeat(filled)}${".".repeat(width - filled)}] ${started}/${total} devices listening`,
  );
  if (started === total) process.stderr.write("\n");
}

// `fleetgate fleet`: N simulated devices of one fleet in this process.
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: flags });
  const parsed = fleetSchema.safeParse(values);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `--${issue.path.join(".")}: ${issue.message}`);
    throw new Error(`${problems.join("; ")}\nusage: ${usage}`);
  }
  const options = parsed.data;
  if (!options["provisioning-key"] && !options.token)
    throw new Error(
      `--provisioning-key or --token (or $FLEETGATE_PROVISIONING_KEY or $FLEETGATE_TOKEN) is required\nusage: ${usage}`,
    );
  const log = (message: string) =>
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), msg: message })}\n`);
  const fleet = await startFleet({
    devices: options.devices,
    baseDir: resolve(options["data-dir"]),
    api: options.api,
    fleet: options.fleet,
    ...(options["provisioning-key"] ? { provisioningKey: options["provisioning-key"] } : {}),
    ...(options.token ? { token: options.token } : {}),
    heartbeatMs: options["heartbeat-interval"] * 1000,
    stateApi: options["state-api"],
    faults: { delayMs: options["delay-ms"], errorRate: options["error-rate"] },
    lockedShare: options["locked-share"],
    offlineShare: options["offline-share"],
    concurrency: options.concurrency,
    onStarted: progress,
    supervisorVersions: options["supervisor-version"],
    device: {
      host: "127.0.0.1",
      services: options.services,
      timings: { ...DEFAULT_TIMINGS, downloadMs: options["download-ms"], installMs: options["install-ms"] },
      pollIntervalMs: options["poll-interval"] * 1000,
      log,
    },
  });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await fleet.close();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop());
  process.once("SIGINT", () => void stop());
  if (options.json) {
    for (const device of fleet.devices) {
      process.stdout.write(
        `${JSON.stringify({ uuid: device.uuid, port: device.port, apiKey: device.device.apiKey })}\n`,
      );
    }
  } else {
    process.stdout.write(
      `${fleet.devices.length} devices of fleet ${options.fleet} running; Ctrl-C stops them\n`,
    );
  }
}
