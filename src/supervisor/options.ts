import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import type { SupervisorOptions } from "./agent.ts";
import { DEFAULT_TIMINGS } from "./timings.ts";
import { CURRENT_SUPERVISOR_VERSION, parseVersion } from "./versions.ts";

// `fleetgate supervisor …` command line → SupervisorOptions, validated once at start.

export const SUPERVISOR_USAGE = `fleetgate supervisor --unmanaged [--api-key <key>] [--app-id <id>] [options]
fleetgate supervisor --api <url> (--provisioning-key <key> | --token <token>) --fleet <id> [--device-type <slug>] [--state-api <v3|v2>] [options]
options: [--uuid <32 hex>] [--host <address>] [--port <port>] [--data-dir <dir>] [--supervisor-version <x.y.z>]
         [--services <n>] [--poll-interval <s>] [--heartbeat-interval <s>]
         [--download-ms <ms>] [--install-ms <ms>] [--step-ms <ms>] [--blink-ms <ms>]`;

const DEFAULT_PORT = 48484;

const integer = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
const seconds = z.coerce.number().positive();

const schema = z
  .object({
    unmanaged: z.boolean().default(false),
    api: z.url().optional(),
    "provisioning-key": z.string().min(1).optional(),
    token: z.string().min(1).optional(),
    fleet: integer(1).optional(),
    "device-type": z.string().min(1).optional(),
    // Where state reports go: v3 as a v17 supervisor reports, v2 the older endpoint.
    "state-api": z.enum(["v3", "v2"]).optional(),
    // The auth middleware only accepts word characters in a Bearer key.
    "api-key": z.string().regex(/^\w+$/, "letters, digits and _ only").optional(),
    uuid: z
      .string()
      .regex(/^[0-9a-f]{32}([0-9a-f]{30})?$/, "32 or 62 lowercase hex digits")
      .optional(),
    "app-id": integer(1).optional(),
    services: integer(0, 10).default(1),
    host: z.string().default("127.0.0.1"),
    port: integer(0, 65535).optional(),
    "data-dir": z.string().default("data/supervisor"),
    "supervisor-version": z
      .string()
      .refine((text) => parseVersion(text) !== null, "not a version")
      .default(CURRENT_SUPERVISOR_VERSION),
    "poll-interval": seconds.default(60),
    "heartbeat-interval": seconds.default(30),
    "download-ms": integer(0).default(DEFAULT_TIMINGS.downloadMs),
    "install-ms": integer(0).default(DEFAULT_TIMINGS.installMs),
    "step-ms": integer(0).default(DEFAULT_TIMINGS.stepMs),
    "blink-ms": integer(0).default(DEFAULT_TIMINGS.blinkMs),
  })
  .superRefine((o, context) => {
    const problem = (message: string) => context.addIssue({ code: "custom", message });
    if (o.unmanaged === (o.api !== undefined)) problem("give either --unmanaged or --api <url>");
    if (o.unmanaged) {
      for (const flag of ["provisioning-key", "token", "fleet", "device-type", "state-api"] as const) {
        if (o[flag] !== undefined) problem(`--${flag} is for a managed device (--api)`);
      }
    }
    if (o.api !== undefined) {
      if (o.fleet === undefined) problem("--fleet <id> is required with --api");
      if ((o["provisioning-key"] === undefined) === (o.token === undefined)) {
        problem("give either --provisioning-key or --token with --api");
      }
      if (o["app-id"] !== undefined) problem("--app-id is for --unmanaged; a managed device runs its fleet");
    }
  });

const stringFlags = Object.keys(schema.shape).filter((flag) => flag !== "unmanaged");

export function parseSupervisorArgs(
  args: string[],
  env: NodeJS.ProcessEnv,
  log: (message: string) => void,
): SupervisorOptions {
  const { values } = parseArgs({
    args,
    options: {
      unmanaged: { type: "boolean" },
      ...Object.fromEntries(stringFlags.map((flag) => [flag, { type: "string" as const }])),
    },
  });
  const parsed = schema.safeParse(values);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) =>
      issue.path.length ? `--${issue.path.join(".")}: ${issue.message}` : issue.message,
    );
    throw new Error(`${problems.join("; ")}\nusage: ${SUPERVISOR_USAGE}`);
  }
  const o = parsed.data;
  const port =
    o.port ??
    (env.PLATFORM_SUPERVISOR_PORT ? integer(0, 65535).parse(env.PLATFORM_SUPERVISOR_PORT) : DEFAULT_PORT);
  return {
    dataDir: resolve(o["data-dir"]),
    host: o.host,
    port,
    apiKey: o["api-key"],
    uuid: o.uuid,
    appId: o["app-id"] ?? 1,
    services: o.services,
    supervisorVersion: o["supervisor-version"],
    timings: {
      downloadMs: o["download-ms"],
      installMs: o["install-ms"],
      stepMs: o["step-ms"],
      blinkMs: o["blink-ms"],
    },
    pollIntervalMs: o["poll-interval"] * 1000,
    ...(o.api !== undefined && {
      managed: {
        api: o.api,
        fleet: o.fleet as number,
        provisioningKey: o["provisioning-key"],
        token: o.token,
        deviceType: o["device-type"],
        heartbeatMs: o["heartbeat-interval"] * 1000,
        stateApi: o["state-api"] ?? "v3",
      },
    }),
    log,
  };
}
