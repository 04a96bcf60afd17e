// `npm run bench:devices [-- --devices 1000000] [-- --instances 1,2,4] [-- --api v2,v3]
// [-- --seconds 60] [-- --step-seconds 15] [-- --ramp-from 100] [-- --ramp-factor 1.5]
// [-- --max-rate 50000] [-- --fleets 10] [-- --connections 64] [-- --load-processes 1]`: issue 29's device-facing API at
// scale. Seeds N devices (each with its own device key), starts fleetgate instances on one
// PostgreSQL and drives them with lightweight simulated supervisors: target-state polls with
// If-None-Match and state reports, open-loop, first at the rate N devices make at
// balena-supervisor's intervals, then ramping up to where p99 passes 100 ms or errors appear.
// Per API version (v2, v3) and instance count: polls/s and reports/s, p50/p99, the share of 304s,
// errors, the servers' CPU and RSS, PostgreSQL's CPU.
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
// Needs PostgreSQL (BENCH_DATABASE_URL's server, default postgres://postgres@127.0.0.1:5432); uses
// a database of its own, dropped at the end. Writes bench/results/devices-<date>.{json,svg} and
// devices-latest.{json,svg}.

import { parseArgs } from "node:util";
import { migrateDatabase } from "./data.ts";
import { devicesTable } from "./devices-chart.ts";
import type { DeviceApi } from "./devices-load.ts";
import { runDevicesBench, writeDevicesResult } from "./devices-run.ts";
import { resultsDir } from "./paths.ts";
import { createScratchDatabase } from "./scratch-database.ts";

const { values: flags } = parseArgs({
  options: {
    devices: { type: "string", default: "1000000" },
    fleets: { type: "string", default: "10" },
    instances: { type: "string", default: "1,2,4" },
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
    connections: { type: "string", default: "64" },
    "load-processes": { type: "string", default: "1" },
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

const scratch = await createScratchDatabase("fg_bench_devices");
try {
  await migrateDatabase(scratch.url);
  const result = await runDevicesBench(
    {
      databaseUrl: scratch.url,
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
    },
    log,
  );
  const name = writeDevicesResult(result, resultsDir);
  process.stdout.write(`${devicesTable(result)}\n`);
  log(`done; results in bench/results/${name}.{json,svg} and devices-latest.*`);
} finally {
  await scratch.drop();
}
