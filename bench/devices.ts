// `npm run bench:devices`: issue 46's headline, a million devices at balena-supervisor's cadence
// (4,409 requests/s) on one fleetgate instance, v2 and v3, on one PostgreSQL and then on the same
// primary with one streaming replica (DATABASE_REPLICA_URLS). Flags:
//   [--devices 1000000] [--api v2,v3] [--instances 1] [--seconds 60] [--warmup-seconds 10]
//   [--no-replica] [--ramp [--step-seconds 15] [--ramp-from 100] [--ramp-factor 1.5] [--max-rate 50000]]
//   [--p99-limit 100] [--fleets 10] [--connections 512] [--load-processes 1] [--database own|server]
//   [--postgres-setting name=value …] [--results bench/results]
// Seeds N devices (each with its own device key), starts fleetgate instances and drives them with
// lightweight simulated supervisors: target-state polls with If-None-Match and state reports,
// open-loop, at the rate N devices make at balena-supervisor's intervals (and, with --ramp, ramping
// up to where p99 passes 100 ms or errors appear). Per API, database and instance count: the rate
// held, polls/s and reports/s, p50/p99, the share of 304s, errors, the servers' CPU and RSS,
// PostgreSQL's CPU (primary and replica), the generator's CPU, connections, statements by target.
//
// The intervals are balena-supervisor's defaults:
// - target-state poll: appUpdatePollInterval, 900000 ms (src/config/schema-type.ts), plus a random
//   jitter of up to maxApiJitterDelay, 60 s (src/lib/constants.ts; src/api-binder/poll.ts);
// - state report: on a change, at most every maxReportFrequency, 10 s; and, with nothing changed,
//   the metrics (CPU, memory, temperature) every maxMetricsFrequency, 300 s
//   (src/api-binder/report.ts). A running device's metrics always change, so that is its
//   heartbeat: one report per 300 s per device, of which `--change-every` makes one in ten a
//   state change (status, running release).
//
// PostgreSQL: by default (`--database own`) the bench starts a primary of its own from the
// PostgreSQL installed on the machine (bench/postgres-cluster.ts), with the settings of
// BENCH_DATABASE_URL's server (default postgres://postgres@127.0.0.1:5432), adds the replica for
// the replica phase, and stops and deletes both at the end (also on Ctrl-C). `--database server`
// uses a scratch database on BENCH_DATABASE_URL's server instead (no replica phase). Writes
// bench/results/devices-<date>.{json,svg} and devices-latest.{json,svg}.

import { parseArgs } from "node:util";
import pg from "pg";
import { migrateDatabase } from "./data.ts";
import { devicesTable, headlineTable, scalingTableText } from "./devices-chart.ts";
import type { DeviceApi } from "./devices-load.ts";
import { type DevicesOptions, runDevicesBench, writeDevicesResult } from "./devices-run.ts";
import { resultsDir } from "./paths.ts";
import { clusterTools, referenceSettings, replicaHooks, startBenchCluster } from "./postgres-cluster.ts";
import { benchServerUrl, createScratchDatabase } from "./scratch-database.ts";

const { values: flags } = parseArgs({
  options: {
    devices: { type: "string", default: "1000000" },
    fleets: { type: "string", default: "10" },
    instances: { type: "string", default: "1" },
    api: { type: "string", default: "v2,v3" },
    seconds: { type: "string", default: "60" },
    "step-seconds": { type: "string", default: "15" },
    "ramp-from": { type: "string", default: "100" },
    "ramp-factor": { type: "string", default: "1.5" },
    "max-rate": { type: "string", default: "50000" },
    "p99-limit": { type: "string", default: "100" },
    "poll-interval": { type: "string", default: "900" },
    "report-interval": { type: "string", default: "300" },
    "change-every": { type: "string", default: "10" },
    connections: { type: "string", default: "512" },
    "load-processes": { type: "string", default: "1" },
    "warmup-seconds": { type: "string", default: "10" },
    ramp: { type: "boolean", default: false },
    "no-replica": { type: "boolean", default: false },
    "postgres-setting": { type: "string", multiple: true, default: [] },
    database: { type: "string", default: "own" },
    // Where the result goes: trial runs write elsewhere, so they do not replace devices-latest.*.
    results: { type: "string", default: resultsDir },
  },
});

const list = (text: string) => text.split(",").map((item) => item.trim());
function positive(name: string, value: string | undefined): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name}: expected a positive number, got ${value}`);
  return n;
}
const apis = list(flags.api as string);
if (positive("ramp-factor", flags["ramp-factor"]) <= 1) throw new Error("--ramp-factor: must be above 1");
for (const api of apis) if (api !== "v2" && api !== "v3") throw new Error(`--api: v2 or v3, not ${api}`);

const began = performance.now();
const log = (message: string) =>
  process.stderr.write(
    `[bench:devices ${((performance.now() - began) / 1000).toFixed(0).padStart(4)} s] ${message}\n`,
  );

const settings = {
  devices: Math.round(positive("devices", flags.devices)),
  fleets: Math.round(positive("fleets", flags.fleets)),
  instances: list(flags.instances as string).map((n) => Math.round(positive("instances", n))),
  apis: apis as DeviceApi[],
  seconds: positive("seconds", flags.seconds),
  stepSeconds: positive("step-seconds", flags["step-seconds"]),
  rampFrom: positive("ramp-from", flags["ramp-from"]),
  rampFactor: positive("ramp-factor", flags["ramp-factor"]),
  maxRate: positive("max-rate", flags["max-rate"]),
  p99LimitMs: positive("p99-limit", flags["p99-limit"]),
  pollIntervalS: positive("poll-interval", flags["poll-interval"]),
  reportIntervalS: positive("report-interval", flags["report-interval"]),
  changeEvery: Math.round(positive("change-every", flags["change-every"])),
  connections: Math.round(positive("connections", flags.connections)),
  loadProcesses: Math.round(positive("load-processes", flags["load-processes"])),
  warmupSeconds: Number(flags["warmup-seconds"]) || 0,
  ramp: flags.ramp === true,
};

/** `name=value` flags as settings of the bench's own primary. */
function postgresSettings(assignments: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    assignments.map((assignment) => {
      const match = /^([a-z_]+)=(.+)$/.exec(assignment);
      if (!match) throw new Error(`--postgres-setting: name=value, not ${assignment}`);
      return [match[1], match[2]];
    }),
  );
}

const DATABASE = "fg_bench_devices";
let cleanup: () => Promise<void> = async () => {};
// Ctrl-C or a kill: stop the instances' database and delete its data before going.
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => {
    log(`${signal}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });

let databaseUrl: string;
let options: Pick<DevicesOptions, "addReplica" | "removeReplica" | "databaseInfo" | "replica">;
if (flags.database === "own") {
  if (!clusterTools())
    throw new Error("--database own: needs initdb, pg_ctl and pg_basebackup (BENCH_POSTGRES_BIN)");
  // The reference server's settings, then the run's own (`--postgres-setting wal_compression=lz4`).
  const reference = {
    ...(await referenceSettings(benchServerUrl().toString())),
    ...postgresSettings(flags["postgres-setting"] as string[]),
  };
  log(
    `starting a PostgreSQL primary of the bench's own (settings of ${benchServerUrl().host}: ${JSON.stringify(reference)})`,
  );
  const cluster = await startBenchCluster(reference);
  cleanup = () => cluster.remove();
  const admin = new pg.Client({ connectionString: cluster.primaryUrl("postgres") });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${DATABASE}"`);
  await admin.end();
  databaseUrl = cluster.primaryUrl(DATABASE);
  options = {
    replica: !flags["no-replica"],
    databaseInfo: { kind: "own primary", settings: reference },
    ...replicaHooks(cluster, DATABASE, log),
  };
} else if (flags.database === "server") {
  if ((flags["postgres-setting"] as string[]).length > 0)
    throw new Error("--postgres-setting: only for the bench's own primary (--database own)");
  const scratch = await createScratchDatabase(DATABASE);
  cleanup = () => scratch.drop();
  databaseUrl = scratch.url;
  if (!flags["no-replica"])
    log("--database server: no replica phase (the bench starts replicas only of its own primary)");
  options = { replica: false, databaseInfo: { kind: "BENCH_DATABASE_URL", settings: {} } };
} else throw new Error(`--database: own or server, not ${flags.database}`);

try {
  await migrateDatabase(databaseUrl);
  const result = await runDevicesBench({ ...settings, ...options, databaseUrl }, log);
  const name = writeDevicesResult(result, flags.results as string);
  process.stdout.write(
    `${headlineTable(result)}\n\n${devicesTable(result)}\n\n${scalingTableText(result)}\n`,
  );
  log(`done; results in ${flags.results}/${name}.{json,svg} and devices-latest.*`);
} finally {
  await cleanup();
}
